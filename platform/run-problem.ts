/**
 * The failure type of a problem that is the archive run's, not an entry's (the archive directory
 * cannot be written, the service refuses the credentials): the run stops and no entry is charged an
 * attempt for it. Shared by the activities and the workflow (a pure module: bundled into workflows).
 */
export const PDF_RUN_PROBLEM = 'PdfArchiveRunProblem';
