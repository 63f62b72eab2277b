/** Starts Swagger UI (loaded from the local swagger-ui-dist package) on /openapi.json. */
declare const SwaggerUIBundle: (options: Record<string, unknown>) => unknown;

SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  // The default validator badge calls a remote service; these docs make no external request.
  validatorUrl: null,
  tryItOutEnabled: false,
  persistAuthorization: false,
});
