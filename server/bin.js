#!/usr/bin/env node
// The `reachkit` command. reachkit ships TypeScript sources run through tsx.
import { register } from "tsx/esm/api";

register();
await import("./cli.ts");
