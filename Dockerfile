# syntax=docker/dockerfile:1
# The tuna images for people with Docker (docs/install.md):
#   docker build --target operator -t tuna/operator:dev .
#   docker build --target edge -t tuna/edge:dev .
# Where there is no Docker engine, hack/image.sh builds the same images with crane. The two are
# kept equal by test/e2e/image.test.ts: the same three layers staged by hack/image-rootfs.sh (base:
# passwd/group and only the libraries node links; node; app), and the same user, working
# directory, entrypoint, command, environment, exposed port and labels.
ARG NODE_VERSION=24.22.3

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY hack/bundle.js ./hack/
# tsc emits dist/ (type-checked), then the CLI is bundled over dist/cli/main.js (hack/bundle.js says why)
RUN node_modules/.bin/tsc -p tsconfig.build.json --outDir /app/dist \
 && node hack/bundle.js /app/dist \
 && cp package.json package-lock.json /app/ \
 && cd /app && npm ci --omit=dev --ignore-scripts --no-audit --no-fund
COPY hack/image-rootfs.sh /usr/local/bin/image-rootfs.sh
RUN image-rootfs.sh /rootfs /usr/local/bin/node /app

# Distroless-like: an empty base, no shell, no package manager.
FROM scratch AS runtime
COPY --from=build /rootfs/base/ /
COPY --from=build /rootfs/node/ /
COPY --from=build /rootfs/app/ /
ENV PATH=/usr/local/bin NODE_ENV=production
USER 65532:65532
WORKDIR /app
# A 16 MiB young generation (V8's default here grows to 64 MiB): shorter scavenge pauses for the
# edge's p99 (docs/tunnel-performance.md, attempt 5) and less memory per host for the operator
# (docs/benchmarks.md, scale attempt M2)
ENTRYPOINT ["/usr/local/bin/node", "--max-semi-space-size=16", "/app/dist/cli/main.js"]
LABEL org.opencontainers.image.licenses=Apache-2.0

FROM runtime AS edge
LABEL org.opencontainers.image.title=tuna-edge \
      org.opencontainers.image.description="tuna edge: publish Kubernetes Services through outbound HTTP/2 reverse tunnels"
CMD ["edge"]

# The last stage is the default target: the operator, with its probes and metrics port.
FROM runtime AS operator
LABEL org.opencontainers.image.title=tuna-operator \
      org.opencontainers.image.description="tuna operator: publish Kubernetes Services through outbound HTTP/2 reverse tunnels"
EXPOSE 8080/tcp
CMD ["operator"]
