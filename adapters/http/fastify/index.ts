export { fastifyPlugin, type FastifyPluginOptions } from "./fastify-plugin.ts";
