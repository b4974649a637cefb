/**
 * YouTube's own contract for the resources Crier sends and reads: the types `@googleapis/youtube`
 * generates from Google's discovery document (imported as types only, so the runtime never loads
 * googleapis), and the field names of the writable resource as lists the compiler holds to those types.
 * The adapter builds its request bodies against the types and the emulator refuses a body with a field
 * the contract does not have, as YouTube does ("Invalid JSON payload received. Unknown name ...").
 */
import type { youtube_v3 } from "@googleapis/youtube";

export type Video = youtube_v3.Schema$Video;
export type VideoSnippet = youtube_v3.Schema$VideoSnippet;
export type VideoStatus = youtube_v3.Schema$VideoStatus;
export type VideoListResponse = youtube_v3.Schema$VideoListResponse;
export type ChannelListResponse = youtube_v3.Schema$ChannelListResponse;
export type PlaylistItemListResponse = youtube_v3.Schema$PlaylistItemListResponse;
export type CommentThread = youtube_v3.Schema$CommentThread;
export type CommentThreadSnippet = youtube_v3.Schema$CommentThreadSnippet;
export type Comment = youtube_v3.Schema$Comment;
export type CommentSnippet = youtube_v3.Schema$CommentSnippet;
export type CommentThreadListResponse = youtube_v3.Schema$CommentThreadListResponse;

/** Every key of T, exactly: a key missing from the list or not in T fails to compile. */
type KeyList<T> = { [K in keyof Required<T>]: true };

const VIDEO_KEYS: KeyList<Video> = {
  ageGating: true,
  brandPartner: true,
  contentDetails: true,
  etag: true,
  fileDetails: true,
  id: true,
  kind: true,
  liveStreamingDetails: true,
  localizations: true,
  monetizationDetails: true,
  paidProductPlacementDetails: true,
  player: true,
  processingDetails: true,
  projectDetails: true,
  recordingDetails: true,
  snippet: true,
  statistics: true,
  status: true,
  suggestions: true,
  topicDetails: true,
};

const SNIPPET_KEYS: KeyList<VideoSnippet> = {
  categoryId: true,
  channelId: true,
  channelTitle: true,
  defaultAudioLanguage: true,
  defaultLanguage: true,
  description: true,
  liveBroadcastContent: true,
  localized: true,
  publishedAt: true,
  tags: true,
  thumbnails: true,
  title: true,
};

const STATUS_KEYS: KeyList<VideoStatus> = {
  containsSyntheticMedia: true,
  embeddable: true,
  failureReason: true,
  license: true,
  madeForKids: true,
  privacyStatus: true,
  publicStatsViewable: true,
  publishAt: true,
  rejectionReason: true,
  selfDeclaredMadeForKids: true,
  uploadStatus: true,
};

/** The fields of the video resource and of the two parts Crier writes, as the contract declares them. */
export const VIDEO_FIELDS = {
  video: Object.keys(VIDEO_KEYS),
  snippet: Object.keys(SNIPPET_KEYS),
  status: Object.keys(STATUS_KEYS),
};

/** The part names videos.insert takes: every top-level field of the resource but its bookkeeping ones. */
export const VIDEO_PARTS = Object.keys(VIDEO_KEYS).filter((k) => k !== "etag" && k !== "kind");

const THREAD_KEYS: KeyList<CommentThread> = { etag: true, id: true, kind: true, replies: true, snippet: true };

const THREAD_SNIPPET_KEYS: KeyList<CommentThreadSnippet> = {
  canReply: true,
  channelId: true,
  isPublic: true,
  postId: true,
  topLevelComment: true,
  totalReplyCount: true,
  videoId: true,
};

const COMMENT_KEYS: KeyList<Comment> = { etag: true, id: true, kind: true, snippet: true };

const COMMENT_SNIPPET_KEYS: KeyList<CommentSnippet> = {
  authorChannelId: true,
  authorChannelUrl: true,
  authorDisplayName: true,
  authorProfileImageUrl: true,
  canRate: true,
  channelId: true,
  likeCount: true,
  moderationStatus: true,
  parentId: true,
  postId: true,
  publishedAt: true,
  textDisplay: true,
  textOriginal: true,
  updatedAt: true,
  videoId: true,
  viewerRating: true,
};

/** The fields of the commentThread resource commentThreads.insert takes, level by level. */
export const COMMENT_THREAD_FIELDS = {
  thread: Object.keys(THREAD_KEYS),
  snippet: Object.keys(THREAD_SNIPPET_KEYS),
  comment: Object.keys(COMMENT_KEYS),
  commentSnippet: Object.keys(COMMENT_SNIPPET_KEYS),
};
