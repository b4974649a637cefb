/**
 * Where an Instagram target goes (platform_options.placement: feed, reels or story) and the rules of each
 * placement that the declaration, made for the feed, cannot say. Sources, all read 2026-11-26:
 * - IG User Media reference (developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/
 *   ig-user/media): media_type STORIES or REELS on a single container; share_to_feed, cover_url,
 *   thumb_offset and trial_params are REELS parameters; collaborators and location_id go on image, Reels
 *   and carousel containers; user_tags on images ({username, x, y}, x and y from 0.0 to 1.0 from the
 *   top-left), on Reels (usernames), and since July 9, 2025 on image and video Stories (x and y optional).
 * - Collaborators reference (…/reference/ig-media/collaborators): "Collaborators tagging supports Feed
 *   image, Reels and Carousel, Stories is not supported"; the container parameter takes up to 3 usernames.
 * - Reels specifications (same IG User Media page): 3 seconds to 15 minutes, 0.01:1 to 10:1, 9:16
 *   recommended. Story video: at most 60 seconds, 9:16 recommended (Instagram shows a Story for 24 hours
 *   in a 9:16 frame and letterboxes other shapes, so an image's feed aspect bounds do not apply).
 */
import type { DeclaredMediaRequirements, MediaItem, OptionProblem, OptionTarget } from "../../src/platform/sdk.ts";
import { mediaRequired } from "../../src/platform/limits.ts";

export const PLACEMENTS = ["feed", "reels", "story"] as const;
export type Placement = (typeof PLACEMENTS)[number];
export const COLLABORATORS_MAX = 3;
/** Instagram tags at most 20 accounts on one media (the app's own limit; the reference names none). */
export const USER_TAGS_MAX = 20;
/** A Story video plays at most 60 seconds; longer ones are cut into several Stories by the app only. */
export const STORY_VIDEO_MAX_S = 60;

export interface UserTag {
  username: string;
  x?: number;
  y?: number;
}

export interface Options {
  placement?: Placement;
  share_to_feed?: boolean;
  thumb_offset?: number;
  collaborators?: string[];
  user_tags?: UserTag[];
  location_id?: string;
  trial_reel?: boolean;
  trial_graduation?: "MANUAL" | "SS_PERFORMANCE";
}

export const placementOf = (o: Options): Placement =>
  PLACEMENTS.includes(o.placement as Placement) ? (o.placement as Placement) : "feed";

/** The declaration's requirements narrowed to a Reel or a Story; the feed keeps the declaration's. */
export function requirementsFor(feed: DeclaredMediaRequirements, o: Options): DeclaredMediaRequirements {
  const placement = placementOf(o);
  if (placement === "feed") return feed;
  const one = { ...feed.file_constraints, maxFiles: 1, maxImageFiles: placement === "reels" ? 0 : 1, maxVideoFiles: 1 };
  if (placement === "reels")
    return {
      ...feed,
      file_constraints: one,
      required_media: mediaRequired("Instagram Reels", ["video"], "one video"),
    };
  return {
    ...feed,
    file_constraints: one,
    required_media: mediaRequired("Instagram Stories", ["image", "video"], "one image or one video"),
    max_video_duration_seconds: STORY_VIDEO_MAX_S,
    aspect_ratio: { video: feed.aspect_ratio?.video, recommended: "9:16" },
  };
}

/** Options that only some placements or media take. */
export function optionProblems(t: OptionTarget<Options>): OptionProblem[] {
  const o = t.options;
  const placement = placementOf(o);
  const problems: OptionProblem[] = [];
  const single = t.media.length === 1 ? t.media[0] : null;
  const reel = placement === "reels" || (placement === "feed" && single?.type === "video");
  const refuse = (option: keyof Options, why: string, hint: string) =>
    problems.push({
      code: "option_not_for_placement",
      message: `platform_options.${option} ${why}`,
      hint,
      field: `platform_options.${option}`,
    });
  if (placement === "story") {
    if (o.collaborators?.length)
      refuse(
        "collaborators",
        "is not taken by an Instagram Story.",
        "Remove collaborators, or publish to the feed or as a Reel.",
      );
    if (o.location_id !== undefined)
      refuse(
        "location_id",
        "is not taken by an Instagram Story.",
        "Remove location_id, or publish to the feed or as a Reel.",
      );
  }
  if (!reel) {
    for (const k of ["share_to_feed", "thumb_offset"] as const)
      if (o[k] !== undefined)
        refuse(k, "applies to an Instagram Reel only.", "Remove it, or send one video with placement reels.");
    if (o.trial_reel && placement === "story")
      refuse("trial_reel", "applies to an Instagram Reel only.", "Remove it, or send one video with placement reels.");
  }
  if (o.user_tags?.length) problems.push(...userTagProblems(o.user_tags, t.media, placement));
  return problems;
}

/** Where user tags go: one image (with x and y), a Reel (usernames only) or a Story (x and y optional). */
function userTagProblems(tags: UserTag[], media: MediaItem[], placement: Placement): OptionProblem[] {
  const fail = (message: string, hint: string): OptionProblem[] => [
    {
      code: "invalid_user_tags",
      message: `platform_options.user_tags ${message}`,
      hint,
      field: "platform_options.user_tags",
    },
  ];
  if (media.length !== 1)
    return fail(
      "tag accounts on a single image, a Reel or a Story; Crier does not tag carousel items.",
      "Send one media item, or remove user_tags.",
    );
  const video = media[0].type === "video";
  const placed = tags.filter((u) => u.x !== undefined || u.y !== undefined);
  if (video && placement !== "story" && placed.length)
    return fail("on a Reel take usernames only, without x and y.", "Remove x and y from the tags.");
  if (!video && placement !== "story" && tags.some((u) => u.x === undefined || u.y === undefined))
    return fail(
      "on an image need x and y (0.0 to 1.0 from the top-left) for each account.",
      "Give x and y for every tag.",
    );
  if (placed.some((u) => u.x === undefined || u.y === undefined))
    return fail("need both x and y, or neither.", "Give both coordinates or none.");
  return [];
}
