# The storagebench operator (cmd/manager): one static binary on an empty base,
# run as user 65532.
#
#   docker build -t REGISTRY/storagebench-manager:TAG .
#
# Base images are build arguments, so a mirror or an internal registry works:
#   --build-arg GO_IMAGE=REGISTRY/golang:1.26
# Go modules come from GOPROXY (--build-arg GOPROXY=...). hack/images.sh builds
# this file offline with buildah against local images (docs/building-images.md).
ARG GO_IMAGE=golang:1.26

FROM --platform=$BUILDPLATFORM ${GO_IMAGE} AS build
ARG GOPROXY
ARG TARGETOS
ARG TARGETARCH
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY api/ api/
COPY cmd/manager/ cmd/manager/
COPY controllers/ controllers/
COPY internal/ internal/
# A static binary, plus the passwd and group entries of the user it runs as.
RUN CGO_ENABLED=0 GOOS="${TARGETOS:-linux}" GOARCH="${TARGETARCH:-}" \
	go build -trimpath -ldflags="-s -w" -o /out/manager ./cmd/manager \
	&& mkdir -p /out/etc \
	&& echo 'nonroot:x:65532:65532:nonroot:/nonexistent:/sbin/nologin' >/out/etc/passwd \
	&& echo 'nonroot:x:65532:' >/out/etc/group

FROM scratch
COPY --from=build /out/ /
USER 65532:65532
ENTRYPOINT ["/manager"]
