import { fuzzShard } from "./support/fuzz-routes.ts";

// Shard 3 of 3 of the route fuzzing (see support/fuzz-routes.ts); the shards run in parallel.
await fuzzShard(2, 3);
