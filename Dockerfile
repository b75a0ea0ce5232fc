# The ddsync image: the npm package (what `npm pack` makes: the compiled CLI, the prebuilt workflow
# bundle, the migrations and views) with its production dependencies, run by the package's own entry
# point. No TypeScript sources, no TypeScript loader, no development dependencies in the image.

# 1. Build: the package, made as `npm pack` makes it (its prepack runs `npm run build`).
FROM node:20-bookworm-slim AS build
WORKDIR /src
# The dependencies first, in their own layer: a change to the sources does not reinstall them.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
# The whole tree, less what .dockerignore leaves out (local state, secrets, host installs and builds).
COPY . .
RUN npm pack --pack-destination /tmp \
 && mkdir /package \
 && tar -xzf /tmp/ddsync-*.tgz -C /package --strip-components=1

# 2. Run: the package and its production dependencies, from the lockfile.
FROM node:20-bookworm-slim
# CA certificates for TLS to the service and Temporal Cloud; tini as PID 1, so signals reach node and
# exited children are reaped (what `docker run --init` does, without depending on it).
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates tini \
 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /package/ ./
COPY package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
# The PDF archive volume mounts here (docker-compose.yml); a named volume takes over this ownership.
RUN mkdir -p /archive && chown node:node /archive
USER node
# Memory settings of a production worker: see infra/production.ts.
ENV MALLOC_ARENA_MAX=2
ENV MALLOC_MMAP_THRESHOLD_=131072
ENTRYPOINT ["tini", "--", "node", "--max-old-space-size=192", "--heap-growing-percent=75", "--max-semi-space-size=4", "bin/ddsync.js"]
CMD ["worker"]
