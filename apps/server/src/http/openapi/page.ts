/**
 * How `/docs` looks: Placard's page, not the vendor's. Swagger UI renders the document; this adds
 * the title, icon, a header that names Placard and links back to the dashboard, the landmarks and
 * labels its own markup lacks, and colours that meet WCAG AA contrast, as files the page loads
 * from its own origin (its Content-Security-Policy allows no inline script or style).
 */

/** The page's title in the browser's tab and history. */
export const DOCS_TITLE = 'Placard API reference';

/** A "P" on Placard's blue, the icon of the page. */
const ICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#0b57a4"/><path d="M11 7h7a6 6 0 0 1 0 12h-3v6h-4zm4 4v4h3a2 2 0 0 0 0-4z" fill="#fff"/></svg>`;

/**
 * Run in the page before Swagger UI renders (on `load`): the header and a `main` around the
 * reference, then, as Swagger UI draws and redraws, a name for each control it leaves unnamed and
 * heading levels without a gap.
 */
const SCRIPT = `(function () {
  var root = document.getElementById('swagger-ui');
  var header = document.createElement('header');
  header.className = 'placard-header';
  var home = document.createElement('a');
  home.href = '/';
  home.textContent = 'Placard';
  var title = document.createElement('span');
  title.textContent = 'API reference';
  header.appendChild(home);
  header.appendChild(title);
  var main = document.createElement('main');
  root.parentNode.insertBefore(header, root);
  root.parentNode.insertBefore(main, root);
  main.appendChild(root);
  // The document's title is the page's h1 and its sections are h3: each heading below it is read
  // one level up, so none is skipped.
  function label() {
    var servers = document.getElementById('servers');
    if (servers && !servers.hasAttribute('aria-label')) servers.setAttribute('aria-label', 'Server');
    var closers = document.querySelectorAll('button.close-modal:not([aria-label])');
    for (var c = 0; c < closers.length; c++) closers[c].setAttribute('aria-label', 'Close');
    var copies = root.querySelectorAll('.copy-to-clipboard > button:not([aria-label])');
    for (var k = 0; k < copies.length; k++) copies[k].setAttribute('aria-label', 'Copy to clipboard');
    // A button's spoken name starts with the words it shows ("Authorize", not "Apply credentials").
    var named = root.querySelectorAll('button[aria-label]');
    for (var n = 0; n < named.length; n++) {
      var text = named[n].textContent.trim();
      var spoken = named[n].getAttribute('aria-label');
      if (text !== '' && spoken.indexOf(text) !== 0) named[n].setAttribute('aria-label', text + ': ' + spoken);
    }
    var headings = root.querySelectorAll('h3:not([aria-level]), h4:not([aria-level]), h5:not([aria-level]), h6:not([aria-level])');
    for (var i = 0; i < headings.length; i++)
      headings[i].setAttribute('aria-level', String(Number(headings[i].tagName.charAt(1)) - 1));
  }
  new MutationObserver(label).observe(document.body, { childList: true, subtree: true });
})();
`;

/** Swagger UI's colours that fail contrast on white, darkened; the header's look. */
const STYLE = `.placard-header {
  display: flex;
  align-items: baseline;
  gap: 1rem;
  max-width: 1460px;
  margin: 0 auto;
  padding: 1rem 20px 0;
  font-family: sans-serif;
}
.placard-header a {
  font-size: 1.5rem;
  font-weight: 700;
  color: #0b57a4;
}
.placard-header span {
  font-size: 1.5rem;
  color: #3b4151;
}
.swagger-ui .info .title small.version-stamp,
.swagger-ui .info .title small pre {
  background: #3b4151;
}
.swagger-ui .info .title small.version-stamp pre,
.swagger-ui .info .title small pre {
  color: #fff;
}
.swagger-ui .info .title small:not(.version-stamp) {
  background: #3d6b00;
}
.swagger-ui .info a,
.swagger-ui .info .base-url,
.swagger-ui .info__license__url {
  color: #0b57a4;
}
.swagger-ui .opblock.opblock-get .opblock-summary-method {
  background: #1d5f9e;
}
.swagger-ui .opblock.opblock-post .opblock-summary-method {
  background: #1c6b4a;
}
.swagger-ui .opblock.opblock-put .opblock-summary-method {
  background: #8a4b00;
}
.swagger-ui .opblock.opblock-patch .opblock-summary-method {
  background: #1f6f66;
}
.swagger-ui .opblock.opblock-delete .opblock-summary-method {
  background: #a11d1d;
}
.swagger-ui .opblock.opblock-head .opblock-summary-method {
  background: #6b21a8;
}
.swagger-ui .btn.authorize,
.swagger-ui .btn.authorize svg {
  color: #1c6b4a;
  fill: #1c6b4a;
  border-color: #1c6b4a;
}
.swagger-ui .download-contents {
  background: #4b5060;
}
.swagger-ui .btn.cancel {
  color: #a11d1d;
  border-color: #a11d1d;
}
.swagger-ui .btn.execute {
  background: #0b57a4;
  border-color: #0b57a4;
}
.swagger-ui .opblock-tag small,
.swagger-ui .opblock .opblock-summary-description,
.swagger-ui .parameter__in,
.swagger-ui .parameter__type,
.swagger-ui .prop-format,
.swagger-ui .response-col_links,
.swagger-ui .model-title,
.swagger-ui .model .property {
  color: #3b4151;
}
.swagger-ui .json-schema-2020-12-expand-deep-button {
  color: #505050;
}
.swagger-ui .parameter__name.required span,
.swagger-ui .parameter__name.required::after {
  color: #a11d1d;
}
`;

/** The `theme` option of @fastify/swagger-ui. */
export const DOCS_THEME = {
  title: DOCS_TITLE,
  css: [{ filename: 'placard.css', content: STYLE }],
  js: [{ filename: 'placard.js', content: SCRIPT }],
  favicon: [
    { filename: 'placard.svg', rel: 'icon', sizes: 'any', type: 'image/svg+xml', content: Buffer.from(ICON) },
  ],
};
