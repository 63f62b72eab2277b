import { z } from 'zod';

/** An endpoint of a provider or an MCP server: `localhost:8080/v1` would parse as a URL of scheme `localhost`. */
export const httpUrl = () => z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' });
