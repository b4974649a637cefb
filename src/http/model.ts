import { t, type TSchema } from "elysia";
import type { TLiteral, TUnion } from "@sinclair/typebox";
import "./formats.ts";

/** Shared wire shapes: the envelopes of the spec and the error body. */
export const ErrorBody = t.Object(
  {
    error: t.Object({
      code: t.String(),
      message: t.String(),
      hint: t.Optional(t.String()),
    }),
  },
  { $id: "#/components/schemas/Error", title: "Error" },
);

export const Data = <T extends TSchema>(schema: T) => t.Object({ data: schema });
export const DataList = <T extends TSchema>(schema: T) => t.Object({ data: t.Array(schema) });

export const PageMeta = t.Object({
  has_more: t.Boolean(),
  next_after: t.Union([t.String({ format: "date-time" }), t.Null()]),
  next_after_id: t.Union([t.String({ format: "uuid" }), t.Null()]),
});

export const Paged = <T extends TSchema>(schema: T) => t.Object({ data: t.Array(schema), meta: PageMeta });

export const PageQuery = {
  limit: t.Optional(
    t.Integer({ minimum: 1, maximum: 100, default: 20, description: "Page size, 1..100 (default 20)." }),
  ),
  after: t.Optional(t.String({ format: "date-time", description: "meta.next_after of the previous page." })),
  after_id: t.Optional(
    t.String({ format: "uuid", description: "meta.next_after_id of the previous page; sent together with after." }),
  ),
};

export const Uuid = t.String({ format: "uuid" });

/**
 * A union of string literals from one of the const arrays of src/domain. Unions of literals, not
 * UnionEnum: an optional UnionEnum query parameter got its first value as a default. Typed as a
 * one-member tuple because elysia cannot infer a response type from a union over a plain array.
 */
export const Literals = <const V extends string>(values: readonly V[], options?: Parameters<typeof t.Union>[1]) =>
  t.Union(
    values.map((v) => t.Literal(v)),
    options,
  ) as unknown as TUnion<[TLiteral<V>]>;

/** Error responses listed in OpenAPI, by status: `errors(400, 404)`. */
export function errors(...statuses: number[]) {
  const text: Record<number, string> = {
    400: "validation_error or a field-specific code",
    404: "not_found",
    409: "a conflict with its own code",
    413: "payload_too_large",
    422: "the record is in a state that cannot be served",
  };
  return Object.fromEntries(statuses.map((s) => [s, ErrorBody])) as Record<number, typeof ErrorBody> & {
    _text?: typeof text;
  };
}

export const isoOrNull = (d: Date | null | undefined) => (d ? d.toISOString() : null);
