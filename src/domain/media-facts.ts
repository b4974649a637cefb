/**
 * What Crier read from a media file when its upload completed (src/media/probe.ts), stored on the media
 * row and shown by GET /v1/media/{id}. One declaration: the media model, the checks at post creation and
 * the conversions all read these fields.
 */
import { t, type Static } from "elysia";

const nullableInt = (description: string) => t.Union([t.Integer(), t.Null()], { description });
const nullableNumber = (description: string) => t.Union([t.Number(), t.Null()], { description });
const nullableString = (description: string) => t.Union([t.String(), t.Null()], { description });

export const ImageFacts = t.Object(
  {
    kind: t.Literal("image"),
    format: t.String({ description: "The decoder's name for the format: jpeg, png, webp, gif, heif." }),
    width: t.Integer({ description: "Pixels as displayed, after the EXIF orientation is applied." }),
    height: t.Integer({ description: "Pixels as displayed, after the EXIF orientation is applied." }),
    orientation: t.Integer({ minimum: 1, maximum: 8, description: "EXIF orientation, 1 when none." }),
    animated: t.Boolean({ description: "More than one frame (an animated GIF or WebP)." }),
    has_location: t.Boolean({
      description:
        "The file carries a location in its metadata (EXIF GPS or XMP); stripped before it leaves for a platform.",
    }),
  },
  { title: "ImageFacts" },
);
export type ImageFacts = Static<typeof ImageFacts>;

export const VideoFacts = t.Object(
  {
    kind: t.Literal("video"),
    container: t.String({ description: "ffprobe's format name, e.g. mov,mp4,m4a,3gp,3g2,mj2 or matroska,webm." }),
    video_codec: nullableString("h264, hevc, vp9, av1, …; null when the file has no video stream."),
    audio_codec: nullableString("aac, opus, …; null when the file has no sound."),
    duration: nullableNumber("Seconds."),
    width: nullableInt("Pixels as displayed, after the rotation is applied."),
    height: nullableInt("Pixels as displayed, after the rotation is applied."),
    rotation: t.Integer({ description: "Degrees the player turns the picture (0, 90, 180, 270)." }),
    frame_rate: nullableNumber("Frames per second."),
    has_location: t.Boolean({ description: "The container carries a recording location (QuickTime location tags)." }),
  },
  { title: "VideoFacts" },
);
export type VideoFacts = Static<typeof VideoFacts>;

export const MediaFacts = t.Union([ImageFacts, VideoFacts], {
  title: "MediaFacts",
  description: "What Crier read from the file when its upload completed.",
});
export type MediaFacts = Static<typeof MediaFacts>;

/** Width over height as displayed, or null when either is unknown. */
export function aspectOf(f: { width: number | null; height: number | null }): number | null {
  return f.width && f.height ? f.width / f.height : null;
}
