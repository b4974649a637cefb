import { t } from "elysia";
import { ConnectError, definePlugin } from "../../src/platform/sdk.ts";
import { connectCall, oauthFlow, tokenCredentials, type TokenResponse } from "../../src/platform/oauth.ts";
import { GB, MB } from "../../src/platform/limits.ts";

// Graph API version; keep it in one place so moving to a newer version is one edit.
const VERSION = "v24.0";

/** Facebook Pages through the Graph API: feed posts, photos, videos; Page tokens from a long-lived user token. */
export default definePlugin({
  platform: "facebook",
  displayName: "Facebook Page",
  status: "declared_only",
  missing: ["publish (/feed, unpublished /photos + attached_media, /videos, Reels)", "Page picker when the user manages several Pages", "fetchRecent", "metrics", "emulator"],
  defaultApiUrl: `https://graph.facebook.com/${VERSION}`,
  textLimit: { max: 63206, unit: "characters" },
  capabilities: { destination: true, source: true, backfill: true, text: true, images: true, video: true, replies: false, threads: false },
  mediaRequirements: {
    supported_formats: ["image/jpeg", "image/png", "image/gif", "image/bmp", "image/tiff", "video/mp4", "video/quicktime"],
    convertible_formats: {},
    max_size_bytes: { image: 4 * MB, video: 10 * GB, gif: 4 * MB },
    file_constraints: { maxFiles: 10, maxImageFiles: 10, maxVideoFiles: 1, maxGifFiles: 1, allowMixedMedia: false, gifBehavior: "posted as a photo" },
    required_media: null,
    max_hashtags: null,
    min_video_duration_seconds: null,
    max_video_duration_seconds: 240 * 60,
    aspect_ratio: { reels: "9:16" },
    thumbnail: { formats: ["image/jpeg", "image/png"], max_size_bytes: 8 * MB, applies_to: "Reels" },
  },
  // Page publishing has no AI-generated disclosure (spec); unknown keys are kept but not sent.
  optionsSchema: t.Object({}, { additionalProperties: true }),
  connect: oauthFlow({
    authorizeUrl: `https://www.facebook.com/${VERSION}/dialog/oauth`,
    tokenUrl: `https://graph.facebook.com/${VERSION}/oauth/access_token`,
    tokenMethod: "GET",
    clientAuth: "body",
    scopes: ["pages_show_list", "pages_manage_posts", "pages_read_engagement", "pages_manage_engagement", "pages_read_user_content", "read_insights", "publish_video", "business_management"],
    scopeSeparator: ",",
    async identity(c, token) {
      // A Page token minted from a long-lived user token does not expire, so trade up first.
      const long = await connectCall<TokenResponse>(c, "Getting a long-lived token", "GET", "/oauth/access_token", {
        query: { grant_type: "fb_exchange_token", client_id: c.settings.CLIENT_ID, client_secret: c.settings.CLIENT_SECRET, fb_exchange_token: token.access_token },
      });
      const pages = await connectCall<{ data: { id: string; name: string; access_token: string; picture?: { data?: { url?: string } } }[] }>(
        c, "Listing your Pages", "GET", "/me/accounts", { query: { fields: "id,name,access_token,picture", access_token: long.access_token } },
      );
      if (pages.data.length === 0) throw new ConnectError("This Facebook user manages no Page that granted access. Choose a Page in the Facebook dialog and try again.");
      if (pages.data.length > 1) throw new ConnectError("This Facebook user manages several Pages; choosing one is not supported yet. Grant access to a single Page in the Facebook dialog.");
      const page = pages.data[0];
      return {
        remoteId: page.id,
        username: page.name,
        avatarUrl: page.picture?.data?.url ?? null,
        credentials: { page_access_token: page.access_token, ...tokenCredentials(long, c.now()) },
      };
    },
  }),
});
