/**
 * Google's own description of the Business Profile APIs the adapter calls, transcribed as TypeBox schemas:
 * field names, enums and which fields are required, for the adapter to type its requests by and for the
 * emulator and the tests to hold every request to. Google publishes these as discovery documents and as
 * the REST reference generated from them; the v4 API (local posts) is not in the public discovery
 * directory and has no npm package of its types, so the facts are written here by hand, each block with
 * its source (all checked 2026-11-26):
 *
 * - LocalPost and its types: developers.google.com/my-business/reference/rest/v4/accounts.locations.localPosts
 *   (methods create, get, list under .../localPosts/{create,get,list}); MediaItem:
 *   developers.google.com/my-business/reference/rest/v4/accounts.locations.media#MediaItem;
 *   FollowersMetadata: developers.google.com/my-business/reference/rest/v4/accounts.locations.followers/getMetadata
 * - Account: developers.google.com/my-business/reference/accountmanagement/rest/v1/accounts (discovery
 *   document: mybusinessaccountmanagement.googleapis.com/$discovery/rest?version=v1)
 * - Location: developers.google.com/my-business/reference/businessinformation/rest/v1/accounts.locations
 *   (discovery document: mybusinessbusinessinformation.googleapis.com/$discovery/rest?version=v1)
 * - Errors: google.rpc.Status with google.mybusiness.v4.ValidationError details
 *   (developers.google.com/my-business/reference/rest/Shared.Types/ValidationError, .../ErrorCode)
 *
 * Google's JSON front end refuses a field a message does not declare ("Invalid JSON payload received.
 * Unknown name ..."), so the request messages are closed (additionalProperties: false). Output-only
 * fields are part of the messages (a client may send them back; Google ignores them).
 */
import { Type as T, type Static, type TSchema } from "@sinclair/typebox";

const oneOf = <const V extends string[]>(...values: V) => T.Union(values.map((v) => T.Literal(v)));
const closed = <P extends Record<string, TSchema>>(props: P) => T.Object(props, { additionalProperties: false });
const opt = T.Optional;
/** RFC 3339 timestamps, as every Timestamp field of these APIs. */
const Timestamp = T.String();

/** LocalPost.topicType (LocalPostTopicType). Required on a post. */
export const TOPIC_TYPES = ["LOCAL_POST_TOPIC_TYPE_UNSPECIFIED", "STANDARD", "EVENT", "OFFER", "ALERT"] as const;
/** CallToAction.actionType (ActionType); GET_OFFER is deprecated ("Use OFFER in LocalPostTopicType"). */
export const ACTION_TYPES = [
  "ACTION_TYPE_UNSPECIFIED",
  "BOOK",
  "ORDER",
  "SHOP",
  "LEARN_MORE",
  "SIGN_UP",
  "GET_OFFER",
  "CALL",
] as const;
/** LocalPost.state (LocalPostState), output only. */
export const POST_STATES = [
  "LOCAL_POST_STATE_UNSPECIFIED",
  "REJECTED",
  "LIVE",
  "PROCESSING",
  "SCHEDULED",
  "RECURRING",
] as const;

/** CallToAction: "url ... should be left unset for Call CTA." */
export const CallToAction = closed({ actionType: opt(oneOf(...ACTION_TYPES)), url: opt(T.String()) });

/** google.type.Date: year 1..9999 (0: none), month 1..12 (0: none), day 1..31 (0: none). */
export const GoogleDate = closed({
  year: opt(T.Integer({ minimum: 0, maximum: 9999 })),
  month: opt(T.Integer({ minimum: 0, maximum: 12 })),
  day: opt(T.Integer({ minimum: 0, maximum: 31 })),
});

/** google.type.TimeOfDay: hours 0..23 (24:00 allowed by some APIs), minutes 0..59, seconds 0..60, nanos. */
export const TimeOfDay = closed({
  hours: opt(T.Integer({ minimum: 0, maximum: 24 })),
  minutes: opt(T.Integer({ minimum: 0, maximum: 59 })),
  seconds: opt(T.Integer({ minimum: 0, maximum: 60 })),
  nanos: opt(T.Integer({ minimum: 0, maximum: 999_999_999 })),
});

/** TimeInterval: "An interval of time, inclusive. It must contain all fields to be valid." */
export const TimeInterval = closed({
  startDate: opt(GoogleDate),
  startTime: opt(TimeOfDay),
  endDate: opt(GoogleDate),
  endTime: opt(TimeOfDay),
});

const DAYS = ["DAY_OF_WEEK_UNSPECIFIED", "MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY", "SUNDAY"];

/** RecurrenceInfo (recurring posts); one occurrence pattern at most. Crier does not send it. */
export const RecurrenceInfo = closed({
  seriesEndTime: opt(Timestamp),
  dailyPattern: opt(closed({})),
  weeklyPattern: opt(closed({ daysOfWeek: opt(T.Array(oneOf(...DAYS))) })),
  monthlyPattern: opt(
    closed({
      dayOfMonth: opt(T.Integer()),
      dayOfWeekOccurrence: opt(
        oneOf("DAY_OF_WEEK_OCCURRENCE_UNSPECIFIED", "FIRST", "SECOND", "THIRD", "FOURTH", "LAST"),
      ),
    }),
  ),
});

/** LocalPostEvent: "Required for topic types EVENT and OFFER." */
export const LocalPostEvent = closed({
  title: opt(T.String()),
  schedule: opt(TimeInterval),
  recurrenceInfo: opt(RecurrenceInfo),
  recurringInstanceTime: opt(Timestamp),
});

/** LocalPostOffer: every field optional; "should only be set when the topicType is OFFER". */
export const LocalPostOffer = closed({
  couponCode: opt(T.String()),
  redeemOnlineUrl: opt(T.String()),
  termsConditions: opt(T.String()),
});

/**
 * MediaItem (accounts.locations.media). On a local post "sourceUrl is the only supported data field": Google
 * fetches the file from it. googleUrl is where Google then hosts it (output only).
 */
export const MediaItem = closed({
  name: opt(T.String()),
  mediaFormat: opt(oneOf("MEDIA_FORMAT_UNSPECIFIED", "PHOTO", "VIDEO")),
  locationAssociation: opt(closed({ category: opt(T.String()), priceListItemId: opt(T.String()) })),
  googleUrl: opt(T.String()),
  thumbnailUrl: opt(T.String()),
  createTime: opt(Timestamp),
  dimensions: opt(closed({ widthPixels: opt(T.Integer()), heightPixels: opt(T.Integer()) })),
  insights: opt(closed({ viewCount: opt(T.String()) })),
  attribution: opt(
    closed({
      profileName: opt(T.String()),
      profilePhotoUrl: opt(T.String()),
      takedownUrl: opt(T.String()),
      profileUrl: opt(T.String()),
    }),
  ),
  description: opt(T.String()),
  sourceUrl: opt(T.String()),
  dataRef: opt(closed({ resourceName: opt(T.String()) })),
});

/** LocalPost, the body of localPosts.create and the answer of create, get and list. */
export const LocalPost = closed({
  name: opt(T.String()),
  languageCode: opt(T.String()),
  summary: opt(T.String()),
  callToAction: opt(CallToAction),
  createTime: opt(Timestamp),
  updateTime: opt(Timestamp),
  scheduledTime: opt(Timestamp),
  recurringInstanceTime: opt(Timestamp),
  event: opt(LocalPostEvent),
  state: opt(oneOf(...POST_STATES)),
  media: opt(T.Array(MediaItem)),
  searchUrl: opt(T.String()),
  topicType: opt(oneOf(...TOPIC_TYPES)),
  alertType: opt(oneOf("ALERT_TYPE_UNSPECIFIED", "COVID_19")),
  offer: opt(LocalPostOffer),
});

/** localPosts.list: pageSize "Default is 20. Minimum is 1, and maximum page size is 100." */
export const ListLocalPostsResponse = T.Object({
  localPosts: opt(T.Array(LocalPost)),
  nextPageToken: opt(T.String()),
});
export const LIST_POSTS_PAGE_MAX = 100;

/** FollowersMetadata: count is an int64, written as a string in JSON. */
export const FollowersMetadata = T.Object({ name: opt(T.String()), count: opt(T.String()) });

/** Account (Account Management API v1). */
export const Account = T.Object({
  name: opt(T.String()),
  accountName: opt(T.String()),
  primaryOwner: opt(T.String()),
  type: opt(oneOf("ACCOUNT_TYPE_UNSPECIFIED", "PERSONAL", "LOCATION_GROUP", "USER_GROUP", "ORGANIZATION")),
  role: opt(oneOf("ACCOUNT_ROLE_UNSPECIFIED", "PRIMARY_OWNER", "OWNER", "MANAGER", "SITE_MANAGER")),
  verificationState: opt(oneOf("VERIFICATION_STATE_UNSPECIFIED", "VERIFIED", "UNVERIFIED", "VERIFICATION_REQUESTED")),
  vettedState: opt(oneOf("VETTED_STATE_UNSPECIFIED", "NOT_VETTED", "VETTED", "INVALID")),
  accountNumber: opt(T.String()),
  permissionLevel: opt(oneOf("PERMISSION_LEVEL_UNSPECIFIED", "OWNER_LEVEL", "MEMBER_LEVEL")),
});
/** accounts.list: pageSize "The default and maximum is 20." */
export const ListAccountsResponse = T.Object({ accounts: opt(T.Array(Account)), nextPageToken: opt(T.String()) });
export const LIST_ACCOUNTS_PAGE_MAX = 20;

/** Location (Business Information API v1): the fields the adapter reads (readMask names them). */
export const Location = T.Object({
  name: opt(T.String()),
  title: opt(T.String()),
  storeCode: opt(T.String()),
  languageCode: opt(T.String()),
  storefrontAddress: opt(
    T.Object({
      regionCode: opt(T.String()),
      postalCode: opt(T.String()),
      administrativeArea: opt(T.String()),
      locality: opt(T.String()),
      addressLines: opt(T.Array(T.String())),
    }),
  ),
  metadata: opt(
    T.Object({
      hasGoogleUpdated: opt(T.Boolean()),
      hasPendingEdits: opt(T.Boolean()),
      canDelete: opt(T.Boolean()),
      canOperateLocalPost: opt(T.Boolean()),
      canModifyServiceList: opt(T.Boolean()),
      canHaveFoodMenus: opt(T.Boolean()),
      canOperateHealthData: opt(T.Boolean()),
      canOperateLodgingData: opt(T.Boolean()),
      placeId: opt(T.String()),
      duplicateLocation: opt(T.String()),
      mapsUri: opt(T.String()),
      newReviewUri: opt(T.String()),
      canHaveBusinessCalls: opt(T.Boolean()),
      hasVoiceOfMerchant: opt(T.Boolean()),
    }),
  ),
});
/** accounts.locations.list: readMask required; pageSize "default value is 10 ... maximum page size is 100". */
export const ListLocationsResponse = T.Object({
  locations: opt(T.Array(Location)),
  nextPageToken: opt(T.String()),
  totalSize: opt(T.Integer()),
});
export const LIST_LOCATIONS_PAGE_MAX = 100;
/** The top-level Location fields a readMask may name (the ones this contract holds). */
export const LOCATION_FIELDS = Object.keys(Location.properties);

/**
 * ErrorCode of an ErrorDetail. The reference lists the names with their ranges ("1 to 199: common error
 * codes that apply to all fields. 1000 to 1099: photos-related error codes"), not each number: these are
 * numbered in the enum's order from each range's start, as its proto (google.mybusiness.v4) does.
 */
export const ERROR_CODES = {
  MISSING_VALUE: 1,
  INVALID_VALUE: 2,
  INVALID_CHARACTERS: 3,
  TOO_MANY_ITEMS: 4,
  READ_ONLY: 5,
  OVERLAPPING_RANGES: 6,
  INVERTED_RANGE: 7,
  VALUE_OUTSIDE_ALLOWED_RANGE: 8,
  MISSING_DEPENDENT_FIELD: 9,
  FIELD_HAS_DEPENDENCIES: 10,
  UNSUPPORTED_VALUE: 11,
  EXPIRED_VALUE: 12,
  PHOTO_FETCH_FAILED: 1000,
  PHOTO_UPLOAD_FAILED: 1001,
} as const;
export type ErrorCodeName = keyof typeof ERROR_CODES;

/** google.rpc.Status as the APIs answer an error, with v4's ValidationError among the details. */
export const ErrorBody = T.Object({
  error: T.Object({
    code: T.Integer(),
    message: T.String(),
    status: T.String(),
    details: opt(
      T.Array(
        T.Object({
          "@type": T.String(),
          reason: opt(T.String()),
          errorDetails: opt(
            T.Array(T.Object({ code: opt(T.Integer()), field: opt(T.String()), message: opt(T.String()) })),
          ),
        }),
      ),
    ),
  }),
});

/** The one OAuth scope every method the adapter calls accepts (their "Authorization scopes"). */
export const BUSINESS_MANAGE = "https://www.googleapis.com/auth/business.manage";
/** The older scope the v4 methods accept too; Account Management and Business Information do not. */
export const PLUS_BUSINESS_MANAGE = "https://www.googleapis.com/auth/plus.business.manage";
export const SCOPES: Record<string, readonly string[]> = {
  "accounts.list": [BUSINESS_MANAGE],
  "accounts.locations.list": [BUSINESS_MANAGE],
  "localPosts.create": [BUSINESS_MANAGE, PLUS_BUSINESS_MANAGE],
  "localPosts.get": [BUSINESS_MANAGE, PLUS_BUSINESS_MANAGE],
  "localPosts.list": [BUSINESS_MANAGE, PLUS_BUSINESS_MANAGE],
  "followers.getMetadata": [BUSINESS_MANAGE, PLUS_BUSINESS_MANAGE],
};

export type LocalPost = Static<typeof LocalPost>;
export type CallToAction = Static<typeof CallToAction>;
export type LocalPostEvent = Static<typeof LocalPostEvent>;
export type GoogleDate = Static<typeof GoogleDate>;
export type TimeOfDay = Static<typeof TimeOfDay>;
export type ListLocalPostsResponse = Static<typeof ListLocalPostsResponse>;
export type FollowersMetadata = Static<typeof FollowersMetadata>;
export type Account = Static<typeof Account>;
export type ListAccountsResponse = Static<typeof ListAccountsResponse>;
export type Location = Static<typeof Location>;
export type ListLocationsResponse = Static<typeof ListLocationsResponse>;
export type ErrorBody = Static<typeof ErrorBody>;
