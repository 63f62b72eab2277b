import { z } from 'zod';

/**
 * A business-scoped user id (BSUID): the user's ISO 3166 alpha-2 country, a dot, `ENT.` for a
 * parent BSUID, then up to 128 letters and digits (`BR.1502576394655843`,
 * `US.ENT.11815799212886844830`), as Meta documents it: a longer id is not one (one of kilobytes would not
 * even fit the identities' unique index).
 * A phone number is digits only, so an address is one or the other by its form
 * (docs/channels.md#whatsapp-usernames-and-changed-numbers).
 */
const bsuidSchema = z.string().regex(/^[A-Z]{2}\.(?:ENT\.)?[A-Za-z0-9]{1,128}$/);

export function isBsuid(value: string): boolean {
  return bsuidSchema.safeParse(value).success;
}

/** The country a BSUID starts with; undefined for anything else (a phone number). */
export function bsuidCountry(value: string): string | undefined {
  return isBsuid(value) ? value.slice(0, 2) : undefined;
}

/**
 * A part of a webhook (an entry, a change, a message, a status) of a shape this code does not know,
 * a future one, is read as null and left out, and the rest of its batch read as usual: refusing the
 * batch would have Meta deliver it again and again, and lose everyone's messages in it.
 */
const orUnknown = <T extends z.ZodType>(schema: T) => schema.nullable().catch(null);

/** The parts of WhatsApp Cloud API webhooks we use; loose, since Meta adds fields over time. */
export const whatsappMessage = z.looseObject({
  /**
   * The sender's phone number. Optional since WhatsApp usernames: a user who hides their number
   * is known only by `from_user_id` (their BSUID), which comes with the number too.
   */
  from: z.string().optional(),
  from_user_id: z.string().optional(),
  /** Set on a message written in a WhatsApp group the business is in (Cloud API groups): not a direct chat. */
  group_id: z.string().optional(),
  id: z.string(),
  timestamp: z.string(),
  type: z.string(),
  text: z.looseObject({ body: z.string() }).optional(),
  interactive: z
    .looseObject({
      type: z.string(),
      button_reply: z.looseObject({ id: z.string(), title: z.string() }).optional(),
      list_reply: z.looseObject({ id: z.string(), title: z.string() }).optional(),
    })
    .optional(),
  button: z.looseObject({ text: z.string(), payload: z.string().optional() }).optional(),
  audio: z.looseObject({ id: z.string(), mime_type: z.string().optional() }).optional(),
  image: z.looseObject({ id: z.string(), mime_type: z.string().optional(), caption: z.string().optional() }).optional(),
  /**
   * A notice about the sender: `user_changed_number` names their new number (`wa_id`) and may carry
   * their new BSUID (`user_id`); `user_changed_user_id`, a changed number WhatsApp cannot share,
   * names only the new BSUID and the old one (`previous_user_id`).
   */
  system: z
    .looseObject({
      type: z.string().optional(),
      wa_id: z.string().optional(),
      user_id: z.string().optional(),
      previous_user_id: z.string().optional(),
    })
    .optional(),
});
export type WhatsAppMessage = z.infer<typeof whatsappMessage>;

const changeValue = z.looseObject({
  messaging_product: z.string().optional(),
  metadata: z.looseObject({ phone_number_id: z.string(), display_phone_number: z.string().optional() }).optional(),
  // wa_id is withheld for users with a username (user_id is then their only id), and a profile may carry only the username.
  contacts: z
    .array(
      z.looseObject({
        wa_id: z.string().optional(),
        user_id: z.string().optional(),
        profile: z.looseObject({ name: z.string().optional(), username: z.string().optional() }).optional(),
      }),
    )
    .optional(),
  messages: z.array(orUnknown(whatsappMessage)).optional(),
  // Only a failed send's error codes are read; anything else a status carries is let through.
  statuses: z
    .array(
      orUnknown(
        z.looseObject({
          id: z.string(),
          status: z.string(),
          errors: z.array(z.looseObject({ code: z.number().optional(), title: z.string().optional() })).optional(),
        }),
      ),
    )
    .optional(),
});

export const whatsappWebhook = z.looseObject({
  object: z.string(),
  entry: z.array(
    orUnknown(
      z.looseObject({
        id: z.string(),
        changes: z.array(orUnknown(z.looseObject({ field: z.string(), value: changeValue }))),
      }),
    ),
  ),
});
export type WhatsAppWebhook = z.infer<typeof whatsappWebhook>;
export type WhatsAppChange = NonNullable<NonNullable<WhatsAppWebhook['entry'][number]>['changes'][number]>;

/** The changes of a webhook, in order, and how many of its parts were of a shape left out (see orUnknown). */
export function webhookChanges(payload: WhatsAppWebhook): { changes: WhatsAppChange[]; unknownParts: number } {
  const entries = payload.entry.filter((entry) => entry !== null);
  const all = entries.flatMap((entry) => entry.changes);
  const changes = all.filter((change) => change !== null);
  const items = changes.flatMap(({ value }) => [...(value.messages ?? []), ...(value.statuses ?? [])]);
  const unknownParts = [payload.entry, all, items].reduce((sum, parts) => sum + parts.filter((part) => part === null).length, 0);
  return { changes, unknownParts };
}

export const verifyQuery = z.object({
  'hub.mode': z.literal('subscribe'),
  'hub.verify_token': z.string(),
  'hub.challenge': z.string(),
});

/** The answer to a send: the new message's id. */
export const whatsappSendResponse = z.looseObject({ messages: z.array(z.looseObject({ id: z.string() })).min(1) });

/**
 * Graph's error for a free-form message outside the 24-hour customer-service window ("Re-engagement
 * message"): in a send's answer, or later in a `failed` status of a message it had accepted.
 */
export const OUTSIDE_WINDOW_CODE = 131047;

export const graphError = z.looseObject({
  error: z.looseObject({ message: z.string().optional(), code: z.number().optional() }),
});
