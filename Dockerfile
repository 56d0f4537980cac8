# chatlog in a container: built from the lockfile, run as the unprivileged `node` user.
#   docker build -t chatlog .
#   docker run -p 3000:3000 -v chatlog-data:/data -e CHATLOG_SECRET=... chatlog
FROM node:22-bookworm-slim AS build
WORKDIR /app
# Node 22 runs better-sqlite3 13, whose addon is prebuilt inside its npm package: no compiler, no
# install script. Optional packages are installed for the build (esbuild's binary for this platform
# is one) and pruned after it, with the dev ones: the optional better-sqlite3 12 (for Node 20 only,
# never compiled here) does not reach the image.
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
RUN npm run build && npm prune --omit=dev --omit=optional

FROM node:22-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    CHATLOG_DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
COPY public ./public
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# One process: run one container per core, or pass --workers.
CMD ["node", "bin/chatlog", "serve", "--workers", "1"]
