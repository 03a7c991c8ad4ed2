# Production image of the merge queue service.
#
#   docker build -t merge-queue .
#   docker run -p 3000:3000 -e MONGODB_URI=mongodb://mongo:27017/merge-queue merge-queue
#
# The image has no Go toolchain and never builds the local FerretDB: always set
# MONGODB_URI (docker-compose.yml wires one to a MongoDB container).
# The CLI is in the image too: `docker exec <container> node dist/cli/main.js token create ...`.
#
# The service handles SIGTERM itself (graceful shutdown); `--init` (compose:
# `init: true`) still helps reap any child processes.

ARG NODE_IMAGE=node:24-bookworm-slim

# ---- build: all dependencies, compile TypeScript to dist/ ----
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# The dashboard's sources: `npm run build` ends with its Vite build (dist/ui).
COPY web ./web
RUN npm run build

# ---- prod-deps: production dependencies only (npm's cache stays in this stage) ----
FROM ${NODE_IMAGE} AS prod-deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

# ---- runtime ----
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 MQ_SANDBOX=false
WORKDIR /app
# Files stay owned by root and read-only to the service user.
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# package.json is needed at run time: its "type": "module" makes dist/*.js ESM.
COPY package.json app.yml ./
# The one directory the service writes: the outgoing-webhook key file when MQ_WEBHOOK_SECRET_KEY is unset (a container
# loses it when replaced, and with it every stored signing secret: set the key in production; compose requires it).
RUN mkdir -p /app/.data && chown node:node /app/.data
# `node` (uid 1000) is the unprivileged user of the official Node images.
USER node
EXPOSE 3000
# Liveness only (/healthz: process up); node's own fetch, as slim images have no curl.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz', { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "dist/main.js"]
