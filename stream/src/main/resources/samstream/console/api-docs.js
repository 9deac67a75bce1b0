// Swagger UI for the engine's own OpenAPI document (served from the swagger-ui WebJar, nothing from a CDN). The
// console's token, when this tab has one, goes with every call (the document itself needs it too).
/* global SwaggerUIBundle */
window.addEventListener('DOMContentLoaded', () => {
  const token = sessionStorage.getItem('samstream.token');
  window.ui = SwaggerUIBundle({
    url: '/api/v1/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    requestInterceptor: request => {
      if (token && !request.headers.Authorization) {
        request.headers.Authorization = `Bearer ${token}`;
      }
      return request;
    },
  });
});
