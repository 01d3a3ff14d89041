// Numbers as the person reads them, where more than one feature shows the same kind (a
// conversation's cost in the chat, an agent run's in its tree).

/** Dollars, with enough digits that a small cost does not read as zero. */
export function formatCost(usd: number): string {
  if (!Number.isFinite(usd) || usd <= 0) return "$0.00";
  if (usd < 0.01) return `$${usd.toPrecision(1)}`;
  return `$${usd.toFixed(2)}`;
}
