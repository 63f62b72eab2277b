import { Router } from 'express';
import { z } from 'zod';
import { loadProfile, PROFILE_SECTIONS, resetProfile, saveProfileSection, type Runtime } from '@assistant/shared';
import { userOf } from '../http/auth';
import { parse } from '../http/validate';

/** Five times the prompt's per-section cap: room to keep notes that the prompt shows in part. */
export const MAX_PROFILE_SECTION_CHARS = 100_000;

export const profileSectionParam = z.enum(PROFILE_SECTIONS);
export const putProfileSectionBody = z.strictObject({ content: z.string().max(MAX_PROFILE_SECTION_CHARS) });

/** ADR-017's six sections (CONTRACT §3): read, replace one, or reset all to the defaults. */
export function profileRoutes(runtime: Runtime): Router {
  const router = Router();
  const { db } = runtime;

  router.get('/v1/profile', async (req, res) => {
    res.json(await loadProfile(db, userOf(req)));
  });

  router.put('/v1/profile/:section', async (req, res) => {
    const section = parse(profileSectionParam, req.params.section);
    const { content } = parse(putProfileSectionBody, req.body);
    res.json(await saveProfileSection(db, userOf(req), section, content));
  });

  router.post('/v1/profile/reset', async (req, res) => {
    res.json(await resetProfile(db, userOf(req)));
  });

  return router;
}
