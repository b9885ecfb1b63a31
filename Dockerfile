# One image for both deployables; docker-compose.yml picks the command:
#   pnpm --filter @pda/ingest start      pnpm --filter @pda/api start
# Node 24 runs the TypeScript sources directly (type stripping, no loader, never built); nothing is
# compiled except better-sqlite3's native addon. Not yet built or run on our machines (no image
# registry is reachable here): images built from a local Debian base are the deployables issue's work.
ARG NODE_IMAGE=node:24-bookworm-slim
ARG PNPM_VERSION=10.34.9

FROM ${NODE_IMAGE} AS deps
ARG PNPM_VERSION
# Compilers only for native addons without a matching prebuilt binary (better-sqlite3).
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
RUN corepack enable && corepack prepare "pnpm@${PNPM_VERSION}" --activate
WORKDIR /app
# Manifests first: the dependency layer is rebuilt only when they change.
COPY package.json pnpm-lock.yaml pnpm-workspace.yaml .npmrc ./
COPY api/package.json api/
COPY bench/package.json bench/
COPY ingest/package.json ingest/
COPY ops/package.json ops/
COPY projections/package.json projections/
COPY schemas/package.json schemas/
COPY test/package.json test/
RUN pnpm install --frozen-lockfile

FROM ${NODE_IMAGE}
ARG PNPM_VERSION
RUN corepack enable && corepack prepare "pnpm@${PNPM_VERSION}" --activate
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /app /app
COPY . .
# Projection files (ingest writes, api reads) live on a volume.
RUN mkdir -p /data && chown node:node /data
VOLUME ["/data"]
USER node
EXPOSE 8080 9464
CMD ["pnpm", "--filter", "@pda/api", "start"]
