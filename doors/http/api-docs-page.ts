/**
 * The Swagger UI page of `{BASE_PATH}/docs`. The spec URL is written absolute: a relative one
 * resolves against the page's own path (the @elysiajs/openapi page fetched
 * `{BASE_PATH}/{BASE_PATH}/docs/json`). Scripts are files, not inline, so a strict
 * Content-Security-Policy in front of the service does not stop the page.
 */

/** The page's own start script, served as `{docs}/assets/swagger-init.js`. */
export const SWAGGER_INIT_SCRIPT = `// Swagger UI takes any string with a contentMediaType for a file upload; JSON query
// parameters (filter_groups, sort_rules) are text to type in.
function jsonTextIsNotAFile() {
  return {
    afterLoad: function (system) {
      var intended = system.fn.isFileUploadIntended;
      system.fn.isFileUploadIntended = function (schema, mediaType) {
        var media = schema && (schema.get ? schema.get('contentMediaType') : schema.contentMediaType);
        return media === 'application/json' ? false : intended(schema, mediaType);
      };
    },
  };
}

window.addEventListener('load', function () {
  var root = document.getElementById('swagger-ui');
  window.ui = SwaggerUIBundle({
    url: root.getAttribute('data-spec-url'),
    dom_id: '#swagger-ui',
    deepLinking: true,
    plugins: [jsonTextIsNotAFile],
    // The public validator badge would send the document to validator.swagger.io.
    validatorUrl: null,
  });
});
`;

const escapeAttribute = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

/** The HTML of the docs page under `docs` (`{BASE_PATH}/docs`). */
export function swaggerPage(docs: string, title: string): string {
  const at = (file: string) => escapeAttribute(`${docs}/assets/${file}`);
  return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8" />
  <meta name="viewport" content="width=device-width, initial-scale=1" />
  <title>${escapeAttribute(title)}</title>
  <link rel="icon" href="data:," />
  <link rel="stylesheet" href="${at('swagger-ui.css')}" />
</head>
<body>
  <div id="swagger-ui" data-spec-url="${escapeAttribute(`${docs}/json`)}"></div>
  <script src="${at('swagger-ui-bundle.js')}"></script>
  <script src="${at('swagger-init.js')}"></script>
</body>
</html>
`;
}
