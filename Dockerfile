# The otelcol-llmslo distribution in a container.
#
#   docker build -t otelcol-llmslo .
#   docker run --rm -p 4317:4317 -p 4318:4318 -p 9464:9464 -p 13133:13133 \
#     -e OTLP_BACKEND_ENDPOINT=tempo:4317 otelcol-llmslo
#
# Stage 1 builds builder-config.yaml (this repository's components through
# path: ./, plus the pinned collector modules) with the collector builder;
# stage 2 runs the static binary on config/collector.yaml in a distroless
# image as a non-root user.

FROM golang:1.26 AS build
ARG BUILDER_VERSION=v0.165.0
# A static binary: the runtime image has no C library.
ENV CGO_ENABLED=0
RUN go install go.opentelemetry.io/collector/cmd/builder@${BUILDER_VERSION}
WORKDIR /src
# Module downloads in their own layer, reused while go.mod and go.sum stay.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN builder --config builder-config.yaml \
 && ./dist/otelcol-llmslo validate --config config/collector.yaml

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /src/dist/otelcol-llmslo /otelcol-llmslo
COPY config/collector.yaml /etc/otelcol-llmslo/config.yaml
# OTLP gRPC and HTTP, Prometheus metrics, health check.
EXPOSE 4317 4318 9464 13133
ENTRYPOINT ["/otelcol-llmslo"]
CMD ["--config", "/etc/otelcol-llmslo/config.yaml"]
