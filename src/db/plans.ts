/**
 * Ends the text of a statement that must be planned for its values on every call, never from a
 * cached generic plan: a generic plan costs `platform_id = $1` at its average share of the table,
 * so once one platform holds most rows, another's filtered list got a plan that scans every
 * platform's rows. See `keysetPage`.
 */
export const PLANNED_PER_CALL = '/* planned per call */';

export const plannedPerCall = (text: string) => text.endsWith(PLANNED_PER_CALL);

/**
 * PostgreSQL refusing a prepared statement because a table it reads changed shape since it was
 * prepared (a migration run while the process serves, say): `cached plan must not change result type`.
 */
export const isStalePlan = (error: unknown) => (error as { code?: string }).code === '0A000' && /cached plan/.test(String((error as Error).message));
