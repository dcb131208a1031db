import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { nodeHandler } from "../../adapters/http/node/index.ts";
import { httpAdapterConformance } from "../../src/testkit/index.ts";
import { listening, makeConformanceKit, nodeHostRoutes, parseHostBody } from "../support/http-hosts.ts";

httpAdapterConformance("node:http", {
  makeKit: makeConformanceKit,
  async mount(mounts, { hostParsesBodies }) {
    const handlers = mounts.map(({ kit, prefix, groups }) => nodeHandler(kit, { prefix, groups }));
    const chain = (request: IncomingMessage, response: ServerResponse, index: number): void => {
      if (index === handlers.length) return void nodeHostRoutes(request, response);
      handlers[index]!(request, response, () => chain(request, response, index + 1));
    };
    const server = createServer((request, response) => {
      if (!hostParsesBodies) return chain(request, response, 0);
      parseHostBody(request).then(() => chain(request, response, 0));
    });
    return listening(server);
  },
});
