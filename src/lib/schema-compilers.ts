/**
 * How route schemas are compiled: with Fastify's own ajv, loaded when a request first needs it
 * rather than at start (loading it costs ~60 ms of every start, and most requests never need it: the
 * read API and the webhook check in their own order). Answers are written by chatlog (most are
 * streamed), so response schemas only document them: plain JSON.stringify serializes.
 */
import { createRequire } from 'node:module';
import type { FastifyServerOptions } from 'fastify';
import { parseTimestamp } from './calendar.js';
import { validationErrorToAppError } from './schemas.js';

// Resolved from fastify's own folder: they are its dependencies, not ours.
const requireFromFastify = createRequire(createRequire(import.meta.url).resolve('fastify'));

type Validate = ((data: unknown) => unknown) & { errors?: unknown };

const lazySchemaCompilers = {
  buildValidator: (externalSchemas: unknown, ajvOptions: unknown) => {
    let compile: ((route: unknown) => Validate) | undefined;
    return (route: unknown): Validate => {
      let validate: Validate | undefined;
      const lazily: Validate = (data) => {
        compile ??= requireFromFastify('@fastify/ajv-compiler')()(externalSchemas, ajvOptions) as (
          route: unknown,
        ) => Validate;
        validate ??= compile(route);
        const valid = validate(data);
        lazily.errors = validate.errors;
        return valid;
      };
      return lazily;
    };
  },
  buildSerializer: () => () => (data: unknown) => JSON.stringify(data),
};

/** Fastify's options for schemas: the lazy compilers, ajv's settings and the contract's invalid_body. */
export const schemaOptions = {
  // Typed by Fastify as ajv's own factories; these answer the same calls (see above).
  schemaController: {
    compilersFactory: lazySchemaCompilers as unknown as NonNullable<
      NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']
    >,
  },
  // A number is not a string, and a field chatlog does not know is left alone.
  // A date-time is what chatlog can store: parseTimestamp's reading (seconds and a zone required).
  ajv: {
    // verbose: an error carries the value it refused, so an impossible day can be named as one.
    customOptions: {
      coerceTypes: false,
      removeAdditional: false,
      allErrors: false,
      allowUnionTypes: true,
      verbose: true,
    },
    onCreate: (ajv: { addFormat(name: string, validate: (text: string) => boolean): unknown }) =>
      ajv.addFormat('date-time', (text) => parseTimestamp(text) !== undefined),
  },
  schemaErrorFormatter: validationErrorToAppError,
} satisfies Partial<FastifyServerOptions>;
