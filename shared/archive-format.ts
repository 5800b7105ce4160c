/**
 * The vault archive's own format (docs/export-import.md), and the state
 * format and release this build writes, which every archive header names.
 * An archive of a newer state format than {@link STATE_FORMAT} is refused.
 */
export const ARCHIVE_FORMAT = 1;

// Until shared/state-format.ts lands on main (the lead's "State format:" commits), these stand in for it.
/** The state format this build writes. */
export const STATE_FORMAT = 2;
/** This build's release. */
export const RELEASE = "0.2.0";
