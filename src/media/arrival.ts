/**
 * What happens when a media's bytes have arrived, whichever way they came (a PUT to this server, an
 * object settled in S3, a file fetched from a URL or sent as base64): the one place every intake path
 * calls before the media is marked uploaded. Today it reads the file's facts (src/media/probe.ts); a file
 * that cannot be read throws UnreadableMedia, and the caller discards the bytes and refuses the upload.
 */
import type { Config } from "../config.ts";
import type { MediaFacts } from "../domain/media-facts.ts";
import type { Logger } from "../log.ts";
import { MEDIA_TYPES, type MediaContentType } from "../storage/keys.ts";
import type { Storage } from "../storage/storage.ts";
import { probeImage, probeVideo, UnreadableMedia } from "./probe.ts";
import { sharp, videoTools } from "./tools.ts";

export { UnreadableMedia };

/** What arrival needs of the app (an AppContext has all of it). */
export interface ArrivalEnv {
  config: Pick<Config, "ffmpegPath" | "ffprobePath">;
  storage: Storage;
  log: Logger;
}

export interface ArrivingFile {
  /** The key the media is (or is about to be) served under. */
  key: string;
  contentType: MediaContentType;
  /**
   * A local file holding the bytes, when there is one (fs: the received upload before it is renamed into
   * place); without it the object stored under `key` is read.
   */
  localPath?: string;
}

export interface Arrived {
  /** null when the tool that reads this kind is missing (no ffprobe for video): the facts stay unknown. */
  facts: MediaFacts | null;
  /** The media row's width, height and duration_seconds columns, filled from the facts. */
  columns: { width: number | null; height: number | null; durationSeconds: number | null };
}

/**
 * Reads the arrived file once. Throws UnreadableMedia when sharp or ffprobe cannot read it; any other
 * error (the store not answering) leaves the upload as it was, to be settled again.
 */
export async function mediaArrived(env: ArrivalEnv, file: ArrivingFile): Promise<Arrived> {
  const facts =
    MEDIA_TYPES[file.contentType].kind === "video" ? await videoFacts(env, file) : await imageFacts(env, file);
  return {
    facts,
    columns: {
      width: facts?.width ?? null,
      height: facts?.height ?? null,
      durationSeconds: facts?.kind === "video" ? facts.duration : null,
    },
  };
}

async function videoFacts(env: ArrivalEnv, file: ArrivingFile): Promise<MediaFacts | null> {
  const tools = videoTools(env.config);
  // Without ffprobe the video is kept with its facts unknown (the README says so; /readyz shows it).
  if (!tools.ffprobe) return null;
  return probeVideo(tools, file.localPath ?? (await env.storage.probeLocation(file.key)));
}

async function imageFacts(env: ArrivalEnv, file: ArrivingFile): Promise<MediaFacts | null> {
  const loaded = await sharp().then(
    () => true,
    (e: unknown) => {
      // A build whose sharp cannot load keeps images with unknown facts rather than refusing them all.
      env.log.error("sharp could not be loaded: image facts are unknown", { error: (e as Error).message });
      return false;
    },
  );
  if (!loaded) return null;
  if (file.localPath) return probeImage(file.localPath);
  const opened = await env.storage.open(file.key);
  if (!opened) throw new UnreadableMedia("the stored file is missing");
  return probeImage(new Uint8Array(await new Response(opened.stream()).arrayBuffer()));
}
