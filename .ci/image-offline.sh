#!/usr/bin/env bash
# Builds the container image with Jib without any registry, on a stand-in base image (an empty layer:
# no JRE inside, so the tarball is for inspection, not for running), then runs ImageEntrypointIT, which
# starts the tarball's own entrypoint, arguments, environment and /app layers against a real broker.
# The real image (mvn -Pimage package) needs the eclipse-temurin:17-jre base image from a registry.
# Usage: .ci/image-offline.sh   (after mvn -q -B -DskipTests package)
set -euo pipefail
cd "$(dirname "$0")/.."
base=$(mktemp -d)
trap 'rm -rf "$base"' EXIT
mkdir "$base/layer"
tar -cf "$base/layer.tar" -C "$base/layer" .
diff_id="sha256:$(sha256sum "$base/layer.tar" | cut -d' ' -f1)"
printf '{"architecture":"amd64","os":"linux","config":{"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]},"rootfs":{"type":"layers","diff_ids":["%s"]}}' \
  "$diff_id" > "$base/config.json"
printf '[{"Config":"config.json","RepoTags":["stand-in-base:latest"],"Layers":["layer.tar"]}]' > "$base/manifest.json"
tar -cf "$base/base.tar" -C "$base" config.json manifest.json layer.tar
mvn -q -B -Pimage package -DskipTests -Djib.from.image="tar://$base/base.tar"
echo "built target/jib-image.tar (stand-in base)"
mvn -B failsafe:integration-test failsafe:verify -Dit.test=ImageEntrypointIT
