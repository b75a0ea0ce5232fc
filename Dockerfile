# The ddsync worker image. Sources run through tsx (no compile step); workflows are bundled at build time.
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
COPY schema ./schema
COPY sql ./sql
COPY simulator ./simulator
RUN node node_modules/tsx/dist/cli.mjs infra/build-workflow-bundle.ts dist/workflow-bundle.js
USER node
ENTRYPOINT ["node", "bin/ddsync.js"]
CMD ["worker", "--bundle", "dist/workflow-bundle.js"]
