import { execFileSync } from "node:child_process";
import { accessSync, chmodSync, chownSync, constants, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before } from "node:test";
import pg from "pg";
import { freePort } from "./free-port.ts";

/**
 * A throw-away PostgreSQL cluster for the tests: one per test process (initdb
 * takes a second or two), a fresh database per test or suite (milliseconds).
 * Installs Debian's `postgresql` package when no server binaries are found, so
 * that the tests pass on a fresh CI machine (which runs them as root).
 */
export interface PostgresCluster {
  /** A new database, empty or a copy of `template` (a database of this cluster); returns its connection URL. */
  createDatabase(template?: string): Promise<string>;
  stop(): void;
}

const BINARY_ROOT = "/usr/lib/postgresql";

function serverBinaries(): string | undefined {
  if (!existsSync(BINARY_ROOT)) return undefined;
  const versions = readdirSync(BINARY_ROOT)
    .filter((version) => existsSync(join(BINARY_ROOT, version, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length > 0 ? join(BINARY_ROOT, versions[0], "bin") : undefined;
}

export function ensurePostgres(): string {
  const found = serverBinaries();
  if (found !== undefined) return found;
  if (process.getuid?.() !== 0) {
    throw new Error("PostgreSQL server binaries are missing: install Debian's postgresql package (apt-get install postgresql) to run the PostgreSQL tests");
  }
  process.stderr.write("PostgreSQL is missing: installing Debian's postgresql package (once)\n");
  const options = { stdio: ["ignore", "ignore", "pipe"] as ("ignore" | "pipe")[], env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } };
  execFileSync("apt-get", ["update"], options);
  execFileSync("apt-get", ["install", "-y", "--no-install-recommends", "postgresql"], options);
  const installed = serverBinaries();
  if (installed === undefined) throw new Error(`apt-get installed postgresql but no initdb is under ${BINARY_ROOT}`);
  return installed;
}

/** PostgreSQL refuses to run as root: as root, run its tools as the `postgres` system user (created if missing). */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const lookup = () => {
    try {
      return execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim();
    } catch {
      return undefined;
    }
  };
  if (lookup() === undefined) execFileSync("useradd", ["--system", "--no-create-home", "postgres"]);
  const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }));
  const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }));
  return { uid, gid };
}

let databases = 0;

/**
 * Creates a database on the server of `url` (any database of it), empty or a
 * copy of `template` (copying a prepared schema is several times faster than
 * creating its tables and indexes again); returns the new database's URL.
 */
export async function createDatabase(url: string, template?: string): Promise<string> {
  const name = `reachkit_${process.pid}_${++databases}`;
  // Through the maintenance database: nobody may be connected to a template while it is copied.
  const admin = new URL(url);
  admin.pathname = "/postgres";
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    await client.query(
      template === undefined
        ? `CREATE DATABASE "${name}" TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'`
        : `CREATE DATABASE "${name}" TEMPLATE "${template}" STRATEGY FILE_COPY`,
    );
  } finally {
    await client.end();
  }
  const target = new URL(url);
  target.pathname = `/${name}`;
  return target.toString();
}

/**
 * Where clusters go: a memory file system when there is one. A cluster writes
 * thousands of files (every database copy is a few hundred), and removing them
 * from a disk after a run of the plugin suites took 6-7 s.
 */
function clusterParent(): string {
  const memory = "/dev/shm";
  try {
    accessSync(memory, constants.W_OK);
    return memory;
  } catch {
    return tmpdir();
  }
}

/** Starts a cluster in a temporary directory; `stop()` shuts it down and removes the directory. */
export async function startPostgres(): Promise<PostgresCluster> {
  const bin = ensurePostgres();
  const user = serverUser();
  const directory = mkdtempSync(join(clusterParent(), "reachkit-postgres-"));
  const data = join(directory, "data");
  const run = (tool: string, args: string[]) => {
    const command = join(bin, tool);
    const [file, argv] = user === undefined ? [command, args] : ["runuser", ["-u", "postgres", "--", command, ...args]];
    execFileSync(file, argv, { stdio: ["ignore", "ignore", "pipe"], cwd: directory });
  };
  if (user !== undefined) {
    chownSync(directory, user.uid, user.gid);
    chmodSync(directory, 0o700);
  }
  let started = false;
  const stop = () => {
    if (started) {
      started = false;
      try {
        run("pg_ctl", ["stop", "-D", data, "-m", "immediate", "-s"]);
      } catch {
        // Already gone; the directory is removed either way.
      }
    }
    rmSync(directory, { recursive: true, force: true });
  };
  try {
    run("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"]);
    const port = await freePort();
    // Durability is pointless for a throw-away cluster; these make it several times faster.
    const settings = [
      `-p ${port}`,
      "-c listen_addresses=127.0.0.1",
      `-c unix_socket_directories=${directory}`,
      "-c fsync=off",
      "-c synchronous_commit=off",
      "-c full_page_writes=off",
      "-c max_connections=300",
    ].join(" ");
    run("pg_ctl", ["start", "-D", data, "-w", "-s", "-l", join(directory, "log"), "-o", settings]);
    started = true;
    process.once("exit", stop);
    const admin = `postgres://postgres@127.0.0.1:${port}`;
    return {
      createDatabase: (template) => createDatabase(`${admin}/postgres`, template),
      stop,
    };
  } catch (error) {
    stop();
    throw error;
  }
}

if (process.argv[1] === import.meta.filename) ensurePostgres();

/**
 * A cluster with one database for the test file that calls this (started before its tests, stopped after
 * them); the returned function gives that database's URL once the tests run.
 */
export function usePostgresDatabase(): () => string {
  let cluster: PostgresCluster | undefined;
  let url: string | undefined;
  before(async () => {
    cluster = await startPostgres();
    url = await cluster.createDatabase();
  });
  after(() => cluster?.stop());
  return () => {
    if (url === undefined) throw new Error("the PostgreSQL database is there once the file's tests run");
    return url;
  };
}

/** Runs `body` with a client of the database at `url` whose search path is `schema` (a kit's `schema` option), ended after. */
export async function withSchemaClient<T>(url: string, schema: string, body: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, options: `-c search_path=${schema}` });
  await client.connect();
  try {
    return await body(client);
  } finally {
    await client.end();
  }
}
