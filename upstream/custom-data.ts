import { checkCustomData, type CustomDataInput } from '../schema/upstream/custom-data.ts';
import { RequestValidationError } from './errors.ts';

/** The contract's customData rules live in schema/upstream/custom-data.ts; here they guard requests. */
export { checkCustomData, type CustomDataInput };

/** customData ready to send; throws RequestValidationError listing every broken rule. */
export function prepareCustomData(input: unknown, endpoint: string, field = 'customData'): CustomDataInput {
  const { data, issues } = checkCustomData(input, field);
  if (issues.length) throw new RequestValidationError(endpoint, issues);
  return data;
}

/** customData from JSON text (CLI flags, files): parsed safely, then checked. */
export function parseCustomDataJson(text: string, endpoint = 'customData'): CustomDataInput {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new RequestValidationError(endpoint, [
      { path: 'customData', message: `not valid JSON (${(e as Error).message})` },
    ]);
  }
  return prepareCustomData(parsed, endpoint);
}
