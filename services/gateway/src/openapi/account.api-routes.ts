import { z } from 'zod';
import { postGotchaBody } from '../routes/gotchas.routes';
import { patchPreferencesBody } from '../routes/preferences.routes';
import { profileSectionParam, putProfileSectionBody } from '../routes/profile.routes';
import { createUserBody, patchMeBody } from '../routes/users.routes';
import { failure, type ApiRoute } from './api-route';
import * as shape from './api-schemas';

/** The user, its preferences, profile and gotchas, and links to channel identities. */
export const accountApiRoutes: ApiRoute[] = [
  {
    method: 'post',
    path: '/v1/users',
    tag: 'users',
    summary: 'Create a user and its API key',
    auth: 'admin',
    body: createUserBody,
    example: { display_name: 'Ana' },
    responses: {
      201: { description: 'the user and its API key', schema: shape.createdUserResponse },
      503: failure('ADMIN_TOKEN is not set'),
    },
  },
  {
    method: 'get',
    path: '/v1/me',
    tag: 'users',
    summary: 'The signed-in user and its assistant personality',
    auth: 'user',
    responses: { 200: { description: 'the user', schema: shape.userResponse } },
  },
  {
    method: 'patch',
    path: '/v1/me',
    tag: 'users',
    summary: "Change the assistant's name, emoji, creature, tone or vibe",
    auth: 'user',
    body: patchMeBody,
    example: { assistant_name: 'Nova', assistant_emoji: '✨' },
    responses: { 200: { description: 'the user', schema: shape.userResponse } },
  },
  {
    method: 'get',
    path: '/v1/preferences',
    tag: 'preferences',
    summary: 'Autonomous mode, iteration limit, model and settings',
    auth: 'user',
    responses: { 200: { description: 'the preferences', schema: shape.preferencesResponse } },
  },
  {
    method: 'patch',
    path: '/v1/preferences',
    tag: 'preferences',
    summary: 'Change preferences; an invalid request changes nothing',
    auth: 'user',
    body: patchPreferencesBody,
    example: { autonomous_mode: true, max_iterations: 10 },
    responses: { 200: { description: 'the preferences', schema: shape.preferencesResponse } },
  },
  {
    method: 'get',
    path: '/v1/profile',
    tag: 'profile',
    summary: 'The six profile sections the assistant reads (strings, may be empty)',
    auth: 'user',
    responses: { 200: { description: 'the profile', schema: shape.profileResponse } },
  },
  {
    method: 'put',
    path: '/v1/profile/:section',
    tag: 'profile',
    summary: 'Replace one profile section',
    auth: 'user',
    params: { section: profileSectionParam },
    body: putProfileSectionBody,
    example: { content: 'Prefers short answers. Works in Lisbon.' },
    responses: { 200: { description: 'the profile', schema: shape.profileResponse } },
  },
  {
    method: 'post',
    path: '/v1/profile/reset',
    tag: 'profile',
    summary: 'Put every profile section back to its default',
    auth: 'user',
    responses: { 200: { description: 'the profile', schema: shape.profileResponse } },
  },
  {
    method: 'get',
    path: '/v1/gotchas',
    tag: 'gotchas',
    summary: 'Lessons about tools: captured from repeated tool errors, or added by hand',
    auth: 'user',
    responses: { 200: { description: 'most recently seen first', schema: z.array(shape.gotchaResponse) } },
  },
  {
    method: 'post',
    path: '/v1/gotchas',
    tag: 'gotchas',
    summary: 'Add a gotcha by hand',
    auth: 'user',
    body: postGotchaBody,
    example: { tool_name: 'create_document', description: 'Always put new documents in a folder the user named.' },
    responses: { 201: { description: 'the gotcha', schema: shape.gotchaResponse } },
  },
  {
    method: 'get',
    path: '/v1/tools',
    tag: 'tools',
    summary: 'Every tool the model is offered: built-in ones first, then those of MCP servers',
    auth: 'user',
    responses: { 200: { description: 'the tools, in the order the model gets them', schema: z.array(shape.toolResponse) } },
  },
  {
    method: 'post',
    path: '/v1/link-codes',
    tag: 'channels',
    summary: 'A one-time code that links a Telegram or WhatsApp chat to this user',
    auth: 'user',
    responses: { 201: { description: 'the code', schema: shape.linkCodeResponse } },
  },
];
