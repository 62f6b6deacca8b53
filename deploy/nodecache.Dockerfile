# syntax=docker/dockerfile:1
# The node cache's image: kdns plus iproute2 (the `ip` that makes the dummy interface) and
# iptables (the NOTRACK/ACCEPT rules), which kdns sets up when run with node-cache's command
# line, as deploy/nodecache/ and the stock nodelocaldns.yaml run it.
# Build and push it from the repository root (the tag the manifests use, deploy/base/):
#   docker build -f deploy/nodecache.Dockerfile -t ghcr.io/kdns/kdns-nodecache:0.1.0 .
#   docker push ghcr.io/kdns/kdns-nodecache:0.1.0
# The base images are build arguments, so a mirror or a pinned digest can stand in for them:
#   --build-arg BUILD_BASE=…     the build stage: Debian with Node.js 26, npm and Node's headers
#   --build-arg RUNTIME_BASE=…   the runtime: Debian (apt-get) with Node.js 26 as `node` on PATH
ARG BUILD_BASE=node:26-trixie-slim
ARG RUNTIME_BASE=node:26-trixie-slim

# Stage 1: deploy/Dockerfile's build, instruction for instruction (libcap2-bin included, though
# only that image uses setcap), so that a builder's layer cache serves both images from one build.
FROM ${BUILD_BASE} AS build
RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends gcc libc6-dev libcap2-bin \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY package.json package-lock.json tsconfig*.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY src ./src
COPY scripts/build-native.mjs scripts/clean-dist.mjs ./scripts/
RUN npm run build && KDNS_NATIVE=required node scripts/build-native.mjs && npm prune --omit=dev

# Stage 2: the runtime. It runs as root, like NodeLocal DNSCache's image: making an interface
# and firewall rules on the host's network needs NET_ADMIN, and Kubernetes gives an added
# capability only to root (a non-root user's added capabilities are not effective). The
# manifests drop every other capability and make the root filesystem read-only.
FROM ${RUNTIME_BASE}
RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends iproute2 iptables \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=build /src/package.json ./package.json
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY --from=build /src/build ./build
COPY bin ./bin
# iptables in the node's backend (nft or legacy), under every name kdns may call.
COPY deploy/nodecache-image/iptables /usr/local/sbin/iptables
RUN for n in iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore; do \
      ln -s iptables /usr/local/sbin/$n; \
    done
USER 0:0
EXPOSE 53/udp 53/tcp 8080 9253
ENTRYPOINT ["node", "--max-semi-space-size=1", "--v8-pool-size=1", "/app/bin/kdns"]
CMD ["node-cache", "-h"]
