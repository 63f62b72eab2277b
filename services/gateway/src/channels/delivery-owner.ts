import type { Queryable } from '@assistant/shared';

/**
 * Whose a delivery is: a turn's event is its turn's user's, a notice names its user, a reply is
 * its inbound message's user's (nobody's, for a stranger's message). A reply queued before replies
 * named their message names nobody (undefined) and always goes out.
 */
export type DeliveryOwner = { turnId: string } | { userId: string } | { channelMessageId: string } | undefined;

/**
 * `$1`, `$2`, `$3`: the owner's user id, turn id and channel message id, all but one NULL. True
 * while the owner is not being erased, or for nobody's. `lock` holds the user row until the
 * statement's transaction ends.
 */
const ownerLiveSql = (lock: boolean) => `(EXISTS (
    SELECT 1 FROM users u WHERE u.erasing_at IS NULL AND u.id = COALESCE($1::uuid,
      (SELECT t.user_id FROM turns t WHERE t.id = $2::uuid), (SELECT m.user_id FROM channel_messages m WHERE m.id = $3::uuid))
    ${lock ? 'FOR SHARE OF u' : ''})
  OR ($1::uuid IS NULL AND $2::uuid IS NULL
    AND ($3::uuid IS NULL OR EXISTS (SELECT 1 FROM channel_messages m WHERE m.id = $3::uuid AND m.user_id IS NULL))))`;

const ownerParams = (owner: DeliveryOwner): [string | null, string | null, string | null] => [
  owner && 'userId' in owner ? owner.userId : null,
  owner && 'turnId' in owner ? owner.turnId : null,
  owner && 'channelMessageId' in owner ? owner.channelMessageId : null,
];

/**
 * Whether the delivery may still go out: not once its user is being erased (DELETE /v1/me), even
 * mid-way through a long answer's parts.
 */
export async function ownerLive(db: Queryable, owner: DeliveryOwner): Promise<boolean> {
  const found = await db.query<{ live: boolean }>(`SELECT ${ownerLiveSql(false)} AS live`, ownerParams(owner));
  return found.rows[0]?.live === true;
}

/**
 * Claims a part before it is sent (docs/channels.md#delivery), unless its owner is being erased by
 * now: the erasure deletes what was sent to the user's chats as it starts, so no part may be
 * claimed after. A turn's event records its turn, whose parts the retention keeps while a Redis
 * come back empty would queue them again (retention.ts of the agent workers' erasure). `FOR SHARE` waits for an erasure that has marked the user but not committed, and
 * then sees the mark. `taken`: another run of the job claimed it first.
 */
export async function claimPart(
  db: Queryable,
  owner: DeliveryOwner,
  part: { key: string; index: number; channel: string; recipient: string; notice: string | null },
): Promise<'claimed' | 'taken' | 'owner erased'> {
  const found = await db.query<{ live: boolean; claimed: boolean }>(
    `WITH owner AS (SELECT ${ownerLiveSql(true)} AS live),
     inserted AS (
       INSERT INTO deliveries (delivery_key, part, channel, recipient, notice, turn_id)
       SELECT $4, $5, $6, $7, $8, $2::uuid FROM owner WHERE owner.live
       ON CONFLICT DO NOTHING RETURNING 1)
     SELECT (SELECT live FROM owner) AS live, EXISTS (SELECT 1 FROM inserted) AS claimed`,
    [...ownerParams(owner), part.key, part.index, part.channel, part.recipient, part.notice],
  );
  const row = found.rows[0];
  if (row?.live !== true) return 'owner erased';
  return row.claimed ? 'claimed' : 'taken';
}
