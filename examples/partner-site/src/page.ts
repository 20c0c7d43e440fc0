import type { Campaign, Display } from '@placard/client';

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

export interface RenderedAd {
  display: Display;
  token: string;
}

function adHtml({ display, token }: RenderedAd): string {
  const campaign: Campaign = display.campaign;
  return `<a class="ad" href="/ads/click/${token}" data-impression="/ads/impression/${token}" rel="sponsored">
      <span class="ad-label">Sponsored</span>
      <strong class="ad-title">${escapeHtml(campaign.title)}</strong>
      ${campaign.description ? `<span class="ad-description">${escapeHtml(campaign.description)}</span>` : ''}
    </a>`;
}

/** The article page, with the ads rendered in the slots they were fetched for. */
export function articlePage(slots: { header: RenderedAd[]; sidebar: RenderedAd[] }): string {
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>The Daily Example</title>
    <link rel="stylesheet" href="/site.css" />
  </head>
  <body>
    <header class="slot" id="header_banner">${slots.header.map(adHtml).join('')}</header>
    <main>
      <article>
        <h1>Why ad servers count every click</h1>
        <p>Advertisers pay for what was shown and what was clicked, so every impression and every click
        is reported once, from this site's server, with the partner key kept out of the page.</p>
      </article>
      <aside class="slot" id="sidebar_top">${slots.sidebar.map(adHtml).join('')}</aside>
    </main>
    <script src="/ads.js" defer></script>
  </body>
</html>
`;
}
