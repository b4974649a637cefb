# Builds the single binary, then ships it alone on a slim base.
FROM node:20-bookworm AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci
COPY . .
RUN npm run build

FROM debian:bookworm-slim
# ffmpeg (Debian's) reads video facts (ffprobe), converts MOV/WebM to MP4 and makes poster frames;
# images need nothing here: sharp and its libvips ride inside the binary.
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates ffmpeg && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/dist/crier /usr/local/bin/crier
ENV HOST=0.0.0.0 PORT=8080 DATA_DIR=/data
VOLUME /data
EXPOSE 8080
ENTRYPOINT ["crier"]
CMD ["serve"]
