# syntax=docker/dockerfile:1

# The production image of Touchpoint: the binary `make build-prod` builds
# (static, with the nodev tag: no embedded Temporal server or UI, so no
# `touchpoint dev`) on distroless, running as a non-root user.
#
#   docker build -t touchpoint .
#   docker run --rm touchpoint help
#
# The entrypoint is the binary, /touchpoint; the command is the subcommand
# (api, auth, worker, migrate, accounts, clients, healthcheck). Configuration
# comes from the environment at run time (docs/operations.md, "Configuration"); no
# secret is part of the image. docker-compose.yml runs the whole stack.

FROM golang:1.26.8-bookworm AS build
WORKDIR /src
# Modules first: they are downloaded again only when go.mod or go.sum change.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod \
    go mod download
COPY . .
# The release this image is (docker build --build-arg VERSION=1.4.0): the
# binary's version, which a versioned worker uses as its Build ID. Tag the
# image with it.
ARG VERSION=devel
# Exactly the Makefile's production build, so the image and `make
# build-prod` produce the same binary (bin/touchpoint-prod).
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    make build-prod VERSION="$VERSION"

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /src/bin/touchpoint-prod /touchpoint
# 65532 is distroless's "nonroot" user; numeric so that runtimes can verify
# it is not root (Kubernetes runAsNonRoot).
USER 65532:65532
# The API, the issuer, the worker's health and metrics, and the API's
# metrics when TOUCHPOINT_METRICS_ADDR is set to :9464.
EXPOSE 8080 8081 8082 9464
ENTRYPOINT ["/touchpoint"]
CMD ["help"]
