/**
 * The useful message of a failure seen in workflow code: an ActivityFailure or ChildWorkflowFailure
 * says only "Activity task failed"; the cause chain holds what the activity or child reported.
 */
export function failureMessage(error: unknown): string {
  let current: unknown = error;
  let message = error instanceof Error ? error.message : String(error);
  for (let depth = 0; depth < 8 && current instanceof Error; depth++) {
    if (
      current.message &&
      !/^(Activity task failed|Child Workflow execution failed|Workflow execution failed)$/i.test(current.message)
    )
      message = current.message;
    current = current.cause;
  }
  return message;
}
