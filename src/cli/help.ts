export const HELP = {
  main: `crier — self-hosted social publishing API

Usage: crier <command> [options]

Commands:
  serve [--no-scheduler]          serve the API (and the publishing engine unless --no-scheduler)
  migrate                         apply database migrations and exit
  move --to-database URL [--to-s3]  copy the embedded installation into PostgreSQL (and its media into S3)
  profiles create --name NAME [--sandbox]
  profiles list
  profiles set-limits PROFILE_ID [--accounts N|unlimited] [--workflows N|unlimited]
  keys create --name NAME [--profile ID] [--scopes LIST|all] [--expires-in 30d]
  keys list [--profile ID]
  keys revoke ID
  keys inbox-link ID
  media cleanup                   remove expired upload tickets that never got bytes, and partial uploads
  users create --email EMAIL [--profile ID]
  users reset-password --email EMAIL
  users set --email EMAIL --can-create-profiles true|false
  users list
  accounts check [--profile ID]   can each connected account publish? (token, expiry, scopes, API version)
  posts import FILE [--profile ID] [--dry-run]   bulk import of posts from a CSV or JSON file
  secrets rotate [--batch N]      re-encrypt stored credentials with SECRET_KEY (after changing it)
  backup --to FILE                one archive of the embedded database and the media files, while serving
  restore FILE [--force]          restore an archive of 'crier backup' into an empty DATA_DIR
  mcp                             MCP server over stdio for AI agents (needs CRIER_URL and CRIER_API_KEY)

Configuration comes from environment variables (PORT, HOST, PUBLIC_URL, DATA_DIR, DATABASE_URL,
SECRET_KEY, LOG_LEVEL, ...); see the README. Run 'crier <command> --help' for details.`,
  mcp: `Usage: crier mcp

Runs an MCP server on stdin/stdout for desktop AI clients. It forwards every tool to the Crier server at
CRIER_URL (its /mcp endpoint) with the API key in CRIER_API_KEY, so the key's scopes decide which tools
are listed, and adds upload_media_from_path, create_media_post_from_path and create_tiktok_draft_from_path,
which read files on this computer. Nothing is printed to stdout but the protocol.

Options:
  -h, --help       show this help`,
  serve: `Usage: crier serve [--no-scheduler] [--allow-moved]

Serves the HTTP API on HOST:PORT (default 127.0.0.1:8080). Without DATABASE_URL the embedded database
lives in DATA_DIR (default ./data) and only one 'crier serve' may use it at a time.

Options:
  --no-scheduler   API only: this copy does not publish due posts (run at least one copy without it)
  --allow-moved    start the engine on an embedded database that 'crier move' copied elsewhere (without it,
                   such a DATA_DIR serves only with --no-scheduler, so no post is published twice)
  -h, --help       show this help`,
  move: `Usage: crier move --to-database postgres://USER:PASSWORD@HOST/DB [--to-s3] [--allow-moved]

Copies the embedded installation in DATA_DIR into an empty PostgreSQL database: applies the migrations
there, copies every table in foreign-key order in one transaction (scheduled times, publishing claims and
leases, sequences as they are), and compares each table's row count and checksum before committing; any
difference rolls the target back and leaves it empty. Stop 'crier serve' on DATA_DIR first (move takes
its lock). Progress goes to stderr, one line per table.

Afterwards DATA_DIR/moved-to records the move and 'crier serve' on DATA_DIR refuses to start its engine
(see 'crier serve --help'). Start the new home with DATABASE_URL and the same SECRET_KEY (or the
DATA_DIR/secret.key file's content when Crier generated it).

Options:
  --to-database URL   the target; it must hold no Crier rows (a freshly created database)
  --to-s3             also copy the uploaded media files into the bucket configured by S3_BUCKET,
                      S3_ENDPOINT, ... and rewrite the stored media URLs (PUBLIC_URL/media/...) to the
                      bucket's (S3_PUBLIC_URL when set, otherwise week-long presigned URLs)
  --allow-moved       copy a DATA_DIR that was already moved once
  -h, --help          show this help`,
  migrate: `Usage: crier migrate

Applies pending database migrations and exits ('crier serve' also applies them at start).`,
  profiles: `Usage: crier profiles <create|list|set-limits>

  profiles create --name NAME [--sandbox]   create a profile; prints its id as the last line
  profiles list                             list profiles
  profiles set-limits PROFILE_ID [--accounts N|unlimited] [--workflows N|unlimited]
                                            cap the profile's accounts and workflows (default unlimited)`,
  "profiles set-limits": `Usage: crier profiles set-limits PROFILE_ID [--accounts N|unlimited] [--workflows N|unlimited]

Sets the profile's limits; give one or both. A limit not given is left as it is.
With N accounts (N >= 0), starting a connect while the profile has N connected accounts answers 403
account_limit_reached, and a connect completing after the limit was reached is refused on its page.
Disconnected accounts do not count; reconnecting an account the profile has never counts twice.
With N workflows, creating one more answers 403 workflow_limit_reached. Existing accounts and
workflows are kept. 'unlimited' clears a limit (the default).

Options:
  --accounts N|unlimited    the most connected accounts the profile may have
  --workflows N|unlimited   the most workflows the profile may have`,
  "profiles create": `Usage: crier profiles create --name NAME [--sandbox]

Creates a profile and prints its id as the last line of stdout.

Options:
  --name NAME   a name for the profile (required)
  --sandbox     route every platform of this profile to Crier's built-in emulators (no real posts)`,
  "profiles list": `Usage: crier profiles list

Lists every profile: id, name, whether it is a sandbox, its account and workflow limits, creation time.`,
  keys: `Usage: crier keys <create|list|revoke|inbox-link>

  keys create --name NAME [--profile ID] [--scopes LIST|all] [--expires-in 30d]
  keys list [--profile ID]
  keys revoke ID
  keys inbox-link ID   a one-time link that signs a browser in to the sandbox inbox`,
  "keys create": `Usage: crier keys create --name NAME [--profile ID] [--scopes LIST|all] [--expires-in DURATION]

Creates an API key and prints its token, alone, as the last line of stdout. The token is shown once.
For a sandbox key with posts:read it also prints (on stderr) a link that signs a browser in to the
sandbox inbox once, within 15 minutes (crier keys inbox-link ID makes a new one).

Options:
  --name NAME            a name to recognise the key by (required)
  --profile ID           the profile the key acts for (default: the profile named "default", created if missing)
  --scopes LIST|all      comma-separated scopes (default all): accounts:read, accounts:write, media:read,
                         media:write, posts:read, posts:write, workflows:read, workflows:write
  --expires-in DURATION  e.g. 30d, 12h, 90m; default: never expires`,
  "keys list": `Usage: crier keys list [--profile ID]

Lists keys (never their tokens): id, name, public prefix, profile, scopes, expiry, revocation.`,
  "keys inbox-link": `Usage: crier keys inbox-link ID

Prints a link that signs a browser in to the sandbox inbox (PUBLIC_URL/sandbox) as the sandbox key ID
(which needs the posts:read scope). The link works once, within 15 minutes, and carries no API key;
the browser then stays signed in for 7 days, or until the key is revoked or expires.`,
  "keys revoke": `Usage: crier keys revoke ID

Revokes a key at once; requests with it get 401 invalid_api_key.`,
  media: `Usage: crier media <cleanup>

  media cleanup   remove expired upload tickets that never received bytes, and their partial files`,
  "media cleanup": `Usage: crier media cleanup

Removes upload tickets that expired without receiving bytes, and the partial files of uploads that died.
'crier serve' also does this once a minute; the command is for API-only deployments and cron.`,
  accounts: `Usage: crier accounts <check>

  accounts check [--profile ID] [--sandbox] [--json]   can each connected account publish now?`,
  "accounts check": `Usage: crier accounts check [--profile ID] [--sandbox] [--json]

For each connected account, makes the platform's cheapest read (nothing is posted) and reports, in a table:
whether the token works (valid, refreshed, refused, unreachable), when it expires, the granted scopes
against the ones publishing, metrics, follower counts and workflows need, whether the platform still
serves the API version Crier calls, and whether the account can publish. Each problem follows the table
as a sentence saying what to do. Exits 1 when any account cannot publish, 0 otherwise.

Options:
  --profile ID   only this profile's accounts (sandbox or not)
  --sandbox      also the accounts of sandbox profiles (they talk to the emulators)
  --json         the rows as JSON instead of the table`,
  posts: `Usage: crier posts <import>

  posts import FILE [--profile ID] [--dry-run] [--idempotency-key K] [--json]
                    create posts from a CSV or JSON file (or only check them with --dry-run)`,
  "posts import": `Usage: crier posts import FILE [--profile ID] [--dry-run] [--idempotency-key K] [--json]

Creates one post per row of FILE, as POST /v1/posts/bulk does: a CSV file with a header row (columns
content, account_ids, publish_at, queue, media_urls, options, first_comment, external_id; see the README)
or a JSON file {"posts": [<the body of POST /v1/posts>, ...]} (a plain array of posts too). Each row is
checked as POST /v1/posts/validate checks a post; rows with problems are not created and do not stop the
others. Rows are numbered as the file shows them: in a CSV the header is row 1 (the first post is row 2,
as a spreadsheet shows it), in JSON the first post is row 1.

The file is sent in parts of 50 rows through the running server (or straight to the database when none
runs), with a progress bar on stderr. Each row is created at most once: a row's key is made from the row
itself (or is K:ROW with --idempotency-key K), so running the command again, after a failure half way or
after fixing the rows that had problems, creates only what is missing. Posts due now are published by
the running server's engine (or by the next 'crier serve').

Prints one line per problem (row number, code, column, message), then a line of counts. Exits 1 when any
row has a problem, 0 otherwise.

Options:
  --profile ID            the profile to import into (default: the profile named default)
  --dry-run               check every row and report; create nothing
  --idempotency-key K     row keys are K:ROW (as with POST /v1/posts/bulk and Idempotency-Key: K)
  --json                  print the whole result (every row, with post ids) as JSON
  -h, --help              show this help`,
  users: `Usage: crier users <create|reset-password|set|list>

  users create --email EMAIL [--profile ID]   a dashboard user; prints a one-time sign-in link
  users reset-password --email EMAIL          a new one-time link on which the user sets a new password
  users set --email EMAIL --can-create-profiles true|false
                                              what the user may do beyond their profiles
  users list                                  list users`,
  "users create": `Usage: crier users create --email EMAIL [--profile ID]

Creates a dashboard user (or adds the profile to an existing one) and prints a one-time sign-in link,
valid 24 hours, as the last line of stdout; on it the user chooses a password. Run it again with another
--profile to give the user several profiles.

Options:
  --email EMAIL   the user's email address (required)
  --profile ID    a profile the user may work in (default: the profile named "default", created if missing)`,
  "users reset-password": `Usage: crier users reset-password --email EMAIL

Prints a new one-time link, valid 24 hours, on which the user sets a new password. Setting it signs the
user out everywhere. Any older link of the user stops working at once.`,
  "users set": `Usage: crier users set --email EMAIL --can-create-profiles true|false

Changes a dashboard user's rights.

Options:
  --email EMAIL                      the user's email address (required)
  --can-create-profiles true|false   may add new profiles from the dashboard's Preferences page. Off for
                                     every user until granted: a profile a user adds has no limits set
                                     (profiles set-limits), so only users an operator trusts get it.`,
  backup: `Usage: crier backup --to FILE

Writes one archive (a tar) of the embedded database and the media files under DATA_DIR/media, with a
manifest: Crier's version, the last migration, the rows per table and a SHA-256 checksum per file.
While 'crier serve' runs on DATA_DIR the snapshot is taken by the server itself, between two statements:
the API and the engine wait only while the database's files are copied, and a post being created or
published is in the archive either whole or not at all. With no server running it reads DATA_DIR
directly. The archive is written beside FILE and renamed into place once complete (mode 0600); FILE is
printed as the last line of stdout, progress goes to stderr.

SECRET_KEY is never in the archive (nor DATA_DIR/secret.key): keep the key safe apart from it; a restore
needs the same one.

With DATABASE_URL (PostgreSQL) the database is not in the archive: back it up with pg_dump; the archive
then holds the media files only. With S3_BUCKET the media are in the bucket and not in the archive.

Options:
  --to FILE    where to write the archive (an existing file is replaced)
  -h, --help   show this help`,
  restore: `Usage: crier restore FILE [--force]

Restores an archive of 'crier backup' into DATA_DIR, which must be empty (it may already hold
secret.key). The archive is unpacked beside the data and checked before anything is put in place: every
file against its checksum, the database against the manifest's migration and row counts, and the
configured key against a stored credential. When the key (SECRET_KEY, or DATA_DIR/secret.key) does not
open it, the restore stops and DATA_DIR is left as it was: the archive does not contain the key, and
credentials only decrypt with the key of the server that made the backup. Then 'crier serve' starts on
the restored data (and applies newer migrations when this Crier is newer than the backup).

With DATABASE_URL the archive must be one made on PostgreSQL: it restores the media files, and the
database comes back with pg_restore (restore it first: the key is checked against it when it answers).

Options:
  --force      replace the database and media of a DATA_DIR that is not empty (no server may be running)
  -h, --help   show this help`,
  "users list": `Usage: crier users list

Lists dashboard users: id, email, whether they may create profiles, creation time.`,
  secrets: `Usage: crier secrets <rotate>

  secrets rotate [--batch N]   re-encrypt every stored credential with SECRET_KEY`,
  "secrets rotate": `Usage: crier secrets rotate [--batch N]

Changing SECRET_KEY: start every copy with SECRET_KEY set to the new key and SECRET_KEY_PREVIOUS to the
old one (stored credentials and links signed with either key keep working), then run this once. It
re-encrypts every stored credential and webhook signing secret still under another key with SECRET_KEY,
N rows per transaction, and prints its progress on stderr. Copies keep serving and publishing meanwhile,
and several runs at once share the work. Stopped halfway, it goes on from there when run again.
When it ends nothing is left under the old key: remove SECRET_KEY_PREVIOUS and restart once links signed
with it have expired (upload URLs: UPLOAD_TICKET_TTL; connect links: 5 minutes).
It refuses, changing nothing, while a stored value opens with neither key (it names those accounts and
webhook endpoints), and when the running server holds another SECRET_KEY than this environment.
Exits 0 when done, 1 when refused.

Options:
  --batch N   rows re-encrypted per transaction (default 100, 1 to 10000)
  -h, --help  show this help`,
} as const;
