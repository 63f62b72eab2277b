import type { Router } from 'express';
import { z } from 'zod';
import { moveRemindersToZone, timeZoneSchema, withTransaction, type Runtime } from '@assistant/shared';
import { apiRouter } from '../http/api-router';
import { userOf } from '../http/auth';
import { HttpError } from '../http/errors';
import { defineRoutes } from '../openapi/api-route';
import * as shape from '../openapi/api-schemas';

/** The rules of docs/api.md#preferences; `settings` is merged key by key, with the keys we know checked. */
export const patchPreferencesBody = z
  .strictObject({
    autonomous_mode: z.boolean(),
    max_iterations: z.number().int().min(1).max(50),
    default_model: z.string().trim().min(1).max(100).nullable(),
    use_rag_by_default: z.boolean(),
    timezone: timeZoneSchema,
    settings: z.looseObject({ dm_scope: z.enum(['main', 'per-channel']).optional() }),
  })
  .partial();

/**
 * The most `settings` may hold, as JSON: ample for a client's own keys, and it keeps a client
 * from growing one row without end, 1 MiB a request.
 */
export const MAX_SETTINGS_BYTES = 65_536;

export const preferenceApi = defineRoutes({
  getPreferences: {
    method: 'get',
    path: '/v1/preferences',
    tag: 'preferences',
    summary: 'Autonomous mode, iteration limit, model and settings',
    auth: 'user',
    responses: { 200: { description: 'the preferences', schema: shape.preferencesResponse } },
  },
  patchPreferences: {
    method: 'patch',
    path: '/v1/preferences',
    tag: 'preferences',
    summary: 'Change preferences; an invalid request changes nothing',
    auth: 'user',
    body: patchPreferencesBody,
    example: { autonomous_mode: true, max_iterations: 10 },
    responses: { 200: { description: 'the preferences', schema: shape.preferencesResponse } },
  },
});

const COLUMNS = 'autonomous_mode, max_iterations, default_model, use_rag_by_default, timezone, settings, created_at, updated_at';

export function preferenceRoutes(runtime: Runtime): Router {
  const { db } = runtime;
  const allowlist = runtime.config.MODEL_ALLOWLIST;
  return apiRouter(preferenceApi, {
    getPreferences: async (req, res) => {
      const found = await db.query(`SELECT ${COLUMNS} FROM user_preferences WHERE user_id = $1`, [userOf(req)]);
      res.json(found.rows[0]);
    },

    patchPreferences: async (req, res, { body }) => {
      // The operator pays for the model: only the ones they allow may be chosen (null = the default).
      if (allowlist && typeof body.default_model === 'string' && !allowlist.includes(body.default_model)) {
        const message = `must be one of: ${allowlist.join(', ')}`;
        throw new HttpError(400, 'validation_failed', 'the request is not valid', [{ code: 'custom', path: ['default_model'], message }]);
      }
      const fields = Object.entries(body).filter(([, value]) => value !== undefined);
      const sets = fields.map(([column], i) =>
        column === 'settings' ? `settings = settings || $${i + 2}::jsonb` : `${column} = $${i + 2}`,
      );
      const values = fields.map(([column, value]) => (column === 'settings' ? JSON.stringify(value) : value));
      const found = await withTransaction(db, async (client) => {
        const before = await client.query<{ timezone: string; settings: Record<string, unknown> }>(
          'SELECT timezone, settings FROM user_preferences WHERE user_id = $1 FOR UPDATE',
          [userOf(req)],
        );
        const from = before.rows[0]?.timezone;
        if (body.settings !== undefined) checkSettingsSize({ ...before.rows[0]?.settings, ...body.settings });
        // A new zone keeps the wall-clock times of the user's reminders (README, "Time zones"); their
        // jobs are queued before the commit, so a failure there (Redis down) changes nothing.
        if (body.timezone !== undefined && from !== undefined && from !== body.timezone) {
          await moveRemindersToZone(client, runtime.queues, userOf(req), from, body.timezone);
        }
        return sets.length === 0
          ? client.query(`SELECT ${COLUMNS} FROM user_preferences WHERE user_id = $1`, [userOf(req)])
          : client.query(`UPDATE user_preferences SET ${sets.join(', ')} WHERE user_id = $1 RETURNING ${COLUMNS}`, [
              userOf(req),
              ...values,
            ]);
      });
      res.json(found.rows[0]);
    },
  });
}

/** 400 when the settings a PATCH would leave are over MAX_SETTINGS_BYTES as JSON. */
function checkSettingsSize(merged: Record<string, unknown>): void {
  if (Buffer.byteLength(JSON.stringify(merged)) <= MAX_SETTINGS_BYTES) return;
  const message = `must be at most ${MAX_SETTINGS_BYTES} bytes as JSON, with the keys already stored`;
  throw new HttpError(400, 'validation_failed', 'the request is not valid', [{ code: 'custom', path: ['settings'], message }]);
}
