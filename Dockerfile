# The ddsync worker image: the production build (npm run build) runs as plain JavaScript, with the
# workflow bundle prebuilt, so a worker starts fast and small.
FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
# The dependencies first, in their own layer: a change to the sources does not reinstall them.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
# The whole tree, less what .dockerignore leaves out (tests, docs, local state, secrets): a new source
# folder cannot be forgotten. test/unit/infra/production-stack.test.ts checks that every file the
# build and the CLI use gets here.
COPY . .
RUN node node_modules/tsx/dist/cli.mjs tools/build.ts
# The PDF archive volume mounts here (docker-compose.yml); a named volume takes over this ownership.
RUN mkdir -p /archive && chown node:node /archive
USER node
# Memory settings of a production worker: see infra/production.ts.
ENV MALLOC_ARENA_MAX=2
ENV MALLOC_MMAP_THRESHOLD_=131072
ENTRYPOINT ["node", "--max-old-space-size=1024", "--heap-growing-percent=75", "--max-semi-space-size=8", "dist/ddsync.mjs"]
CMD ["worker", "--bundle", "dist/workflow-bundle.js"]
