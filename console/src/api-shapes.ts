import type { components, operations } from './api-types.d.ts';

/**
 * The API's shapes as the console names them: read from the types generated from the service's
 * OpenAPI document (api-types.d.ts, `bun run console:types`), never copied by hand — once the types
 * are generated again, a change of the contract is a type error wherever a page relies on what changed.
 */

/** A schema the document names (`components.schemas`): Row, Cell, Column, FilterRule… */
export type Schema<Name extends keyof components['schemas']> = components['schemas'][Name];

type JsonOf<T> = T extends { content: { 'application/json': infer Body } } ? Body : never;

/** What an operation (by its operationId, the MCP tool's name) answers as JSON with `status` (its success by default). */
export type Answer<Op extends keyof operations, Status extends keyof operations[Op]['responses'] = SuccessOf<Op>> = JsonOf<
  operations[Op]['responses'][Status]
>;

/** The JSON body an operation takes. */
export type Body<Op extends keyof operations> = JsonOf<NonNullable<operations[Op]['requestBody']>>;

type SuccessOf<Op extends keyof operations> = Extract<keyof operations[Op]['responses'], 200 | 201 | 202>;
