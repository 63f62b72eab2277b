import { budgetExhausted, budgetExhaustedMessage, failTurn, type Allowance, type Db } from '@assistant/shared';
import type { TurnState } from '@assistant/shared';

/**
 * docs/agent.md#limits: past the user's daily token budget no model call is made and the turn ends
 * `failed` with `budget_exhausted`. Checked before every call from what earlier calls recorded,
 * (read with the step's user, just before the call), so concurrent turns of one user overshoot by at most the one call each has in flight. A user
 * an admin disabled makes no more calls either: their turns already accepted end `failed` with
 * `user_disabled`. Answers true when the turn was stopped.
 */
export async function stopAtBudget(db: Db, allowance: Allowance, { turn }: TurnState): Promise<boolean> {
  if (allowance.disabled) {
    await failTurn(db, turn.id, 'user_disabled', 'This account is disabled, so the assistant cannot answer.');
    return true;
  }
  if (!budgetExhausted(allowance)) return false;
  await failTurn(db, turn.id, 'budget_exhausted', budgetExhaustedMessage(allowance));
  return true;
}
