/**
 * Validating bodies against the OpenAPI document the server itself serves: a response (or
 * request) schema may refer to the named components (`#/components/schemas/Pick`), so each
 * schema is compiled with the components beside it as `$defs`.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

const COMPONENT_REF = '#/components/schemas/';

function withDefsRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withDefsRefs);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => [
      key,
      key === '$ref' && typeof inner === 'string' && inner.startsWith(COMPONENT_REF) ? `#/$defs/${inner.slice(COMPONENT_REF.length)}` : withDefsRefs(inner),
    ]),
  );
}

export interface OpenApiValidator {
  /** null when `body` matches `schema`, else ajv's errors as text. */
  errorsOf(schema: object, body: unknown): string | null;
}

export function openApiValidator(document: { components?: { schemas?: Record<string, unknown> } }): OpenApiValidator {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  (addFormats as unknown as { default: (ajv: unknown) => void }).default(ajv);
  const defs = withDefsRefs(document.components?.schemas ?? {});
  return {
    errorsOf(schema, body) {
      const validate = ajv.compile({ ...(withDefsRefs(schema) as object), $defs: defs });
      return validate(body) ? null : JSON.stringify(validate.errors);
    },
  };
}

/** The JSON schema of one documented response, or undefined. */
export function responseSchema(document: any, path: string, method: string, status: number | string): object | undefined {
  return document.paths?.[path]?.[method.toLowerCase()]?.responses?.[String(status)]?.content?.['application/json']?.schema;
}
