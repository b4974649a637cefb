/**
 * String formats the API enforces more strictly than the framework's defaults. Imported by
 * src/http/model.ts after elysia, whose own registrations these replace.
 */
import { FormatRegistry } from "@sinclair/typebox";
import { isDateTime } from "../domain/datetime.ts";

FormatRegistry.Set("date-time", isDateTime);
