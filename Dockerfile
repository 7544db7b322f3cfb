# syntax=docker/dockerfile:1
# Switchboard: a static binary on a distroless base, running as a non-root user.
#   docker build -t switchboard .
#   docker run -p 8080:8080 -v switchboard-data:/data switchboard

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags "-s -w" -o /out/switchboard ./cmd/switchboard \
 && mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/switchboard /usr/local/bin/switchboard
# The data directory belongs to the nonroot user (65532) so a fresh volume is writable.
COPY --from=build --chown=65532:65532 --chmod=0700 /out/data /data
USER 65532:65532
ENV SWITCHBOARD_ADDR=0.0.0.0:8080 \
    SWITCHBOARD_DATA_DIR=/data
VOLUME /data
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/switchboard"]
CMD ["serve"]
