import type { Router } from 'express';
import { z } from 'zod';
import {
  loadProfile,
  MAX_PROFILE_SECTION_CHARS,
  PROFILE_SECTIONS,
  resetProfile,
  saveProfileSection,
  type Runtime,
} from '@assistant/shared';
import { apiRouter } from '../http/api-router';
import { userOf } from '../http/auth';
import { defineRoutes } from '../openapi/api-route';
import * as shape from '../openapi/api-schemas';

export const profileSectionParam = z.enum(PROFILE_SECTIONS);
export const putProfileSectionBody = z.strictObject({ content: z.string().max(MAX_PROFILE_SECTION_CHARS) });

const profile = { 200: { description: 'the profile', schema: shape.profileResponse } };

export const profileApi = defineRoutes({
  getProfile: {
    method: 'get',
    path: '/v1/profile',
    tag: 'profile',
    summary: 'The six profile sections the assistant reads (strings, may be empty)',
    auth: 'user',
    responses: profile,
  },
  putSection: {
    method: 'put',
    path: '/v1/profile/:section',
    tag: 'profile',
    summary: 'Replace one profile section',
    auth: 'user',
    params: { section: profileSectionParam },
    body: putProfileSectionBody,
    example: { content: 'Prefers short answers. Works in Lisbon.' },
    responses: profile,
  },
  resetProfile: {
    method: 'post',
    path: '/v1/profile/reset',
    tag: 'profile',
    summary: 'Put every profile section back to its default',
    auth: 'user',
    responses: profile,
  },
});

/** The six sections of docs/memory.md#profile: read, replace one, or reset all to the defaults. */
export function profileRoutes(runtime: Runtime): Router {
  const { db } = runtime;
  return apiRouter(profileApi, {
    getProfile: async (req, res) => {
      res.json(await loadProfile(db, userOf(req)));
    },
    putSection: async (req, res, { params, body }) => {
      res.json(await saveProfileSection(db, userOf(req), params.section, body.content));
    },
    resetProfile: async (req, res) => {
      res.json(await resetProfile(db, userOf(req)));
    },
  });
}
