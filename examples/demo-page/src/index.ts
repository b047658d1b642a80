export { closeGracefully } from './close.js';
export { type AppConfig, type Env, readConfig } from './config.js';
export { jsonLogger } from './logger.js';
export { type Running, runMain } from './main.js';
export { CONTENT_SECURITY_POLICY, publicDir, type StaticResponse, servePublic } from './static.js';
export { runWorker } from './worker.js';
