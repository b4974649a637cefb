import { ApiError } from "../../http/errors.ts";

export class LinkInvalid extends ApiError {
  constructor() {
    super(
      400,
      "link_invalid",
      "This sign-in link is unknown, already used or older than 24 hours.",
      "Ask your administrator for a new one (crier users reset-password --email <you>).",
    );
  }
}

export class SignInFailed extends ApiError {
  constructor() {
    super(401, "sign_in_failed", "The email or password is wrong.", "Check both, or ask for a new sign-in link.");
  }
}

export class NotAMember extends ApiError {
  constructor() {
    super(
      403,
      "no_profile",
      "This user belongs to no profile.",
      "Add one with crier users create --email <you> --profile <id>.",
    );
  }
}

export class SignInRateLimited extends ApiError {
  constructor(retryAfterSeconds: number) {
    super(
      429,
      "rate_limited",
      "Too many sign-in attempts.",
      `Wait ${retryAfterSeconds} s (Retry-After) before trying again.`,
      { "retry-after": String(retryAfterSeconds) },
    );
  }
}

export class ProfileCreationForbidden extends ApiError {
  constructor() {
    super(
      403,
      "profile_creation_forbidden",
      "This user may not create profiles.",
      "Ask your administrator to create the profile (crier profiles create) or to grant the right (crier users set --email <you> --can-create-profiles true).",
    );
  }
}
