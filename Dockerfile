# The ddsync worker image: the production build (npm run build) runs as plain JavaScript, with the
# workflow bundle prebuilt, so a worker starts fast and small.
FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY bin ./bin
COPY cli ./cli
COPY infra ./infra
COPY workflows ./workflows
COPY activities ./activities
COPY upstream ./upstream
COPY warehouse ./warehouse
COPY schema ./schema
COPY platform ./platform
COPY sql ./sql
COPY simulator ./simulator
COPY examples ./examples
RUN node node_modules/tsx/dist/cli.mjs infra/build.ts
# The PDF archive volume mounts here (docker-compose.yml); a named volume takes over this ownership.
RUN mkdir -p /archive && chown node:node /archive
USER node
# Memory settings of a production worker: see infra/production.ts.
ENV MALLOC_ARENA_MAX=2
ENTRYPOINT ["node", "--max-old-space-size=96", "--max-semi-space-size=8", "dist/ddsync.mjs"]
CMD ["worker", "--bundle", "dist/workflow-bundle.js"]
