# One image for every service; the command picks which one runs (see docker-compose.yml).
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.base.json tsconfig.json ./
COPY packages/shared/package.json packages/shared/
COPY services/gateway/package.json services/gateway/
COPY services/agent-worker/package.json services/agent-worker/
COPY services/tool-worker/package.json services/tool-worker/
# The embedded PostgreSQL (an optional dependency) is for machines without one; containers have one.
RUN npm ci --no-audit --no-fund --omit=optional
COPY . .
RUN npm run build && npm prune --omit=dev --omit=optional

FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app /app
# `node scripts/dist/start.js` (what `npm start` runs once built) keeps its generated admin token here.
RUN mkdir -p /app/.data && chown node:node /app/.data
USER node
EXPOSE 3000
# One service per container (docker-compose.yml migrates first). All three in one container:
# `node scripts/dist/start.js`, which migrates and supervises them as `npm start` does (the image
# is built already and keeps no compiler, so not `npm start` itself).
CMD ["node", "services/gateway/dist/main.js"]
