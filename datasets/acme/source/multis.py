"""Multi-tool requests, written by hand: (request, gold tools in the order they are used)."""

MULTIS: list[tuple[str, list[str]]] = [
    # ---------------------------------------------------------------- payments + email/support
    (
        "Refund order 8812 and email the customer that the money is on its way",
        ["refund_payment", "send_email"],
    ),
    (
        "Ticket 48002: the customer was double charged. Refund the duplicate payment pay_5521 "
        "and reply on the ticket confirming it, then close it out",
        ["refund_payment", "add_ticket_comment", "update_ticket"],
    ),
    (
        "pls refund $25 on pay_98s1 for the scratched lid and use the refund-issued macro on "
        "ticket 49120",
        ["refund_payment", "apply_macro"],
    ),
    (
        "Look up payment pay_7sk2 - if it actually succeeded, refund it fully, customer "
        "cancelled within the 14 day window",
        ["get_payment", "refund_payment"],
    ),
    (
        "We got a chargeback on order 10233. Find the dispute, then send the tracking number "
        "as evidence",
        ["list_disputes", "track-shipment", "submit_dispute_evidence"],
    ),
    (
        "Check whether any disputes need a response and post a summary in #finance",
        ["list_disputes", "postMessage"],
    ),
    (
        "Charge cus_5501 $1,250 for the onboarding package and send them a receipt email",
        ["charge_card", "send_email"],
    ),
    (
        "make a $300 payment link for the custom engraving job and email it to ravi@example.com",
        ["create_payment_link", "send_email"],
    ),
    (
        "Order 10442 just shipped. Capture the held payment and buy a UPS ground label from RNO1",
        ["capture_payment", "create-shipment"],
    ),
    (
        "Customer cancelled order 9981 before it shipped - release the hold on their card "
        "and void label shp_9981",
        ["void_authorization", "cancel-shipment"],
    ),
    (
        "list this week's failed payments and dump them into the 'Failed charges' tab of "
        "sheet sh_550",
        ["list_payments", "sheets_append_rows"],
    ),
    (
        "cus_3302's card expired. Set their new card pm_77x as default and retry the $89 charge",
        ["update_payment_method", "charge_card"],
    ),
    (
        "How much did we get paid out last week? Put the figure in a message to the CFO, Helen",
        ["list_payouts", "sendDirectMessage"],
    ),
    # ---------------------------------------------------------------- billing combos
    (
        "Cancel sub_3090 at period end and give them a $100 credit for the trouble",
        ["cancelSubscription", "applyAccountCredit"],
    ),
    (
        "Find out what plan sub_2201 is on, then move them up one tier",
        ["getSubscription", "changeSubscriptionPlan"],
    ),
    (
        "Bill Initech for the extra training days (3 x 500 EUR) and send the invoice right away",
        ["createInvoice", "sendInvoice"],
    ),
    (
        "INV-2024-0188 went to the wrong customer. Void it, recreate it for cus_7731 with the "
        "same line, and send the new one",
        ["voidInvoice", "createInvoice", "sendInvoice"],
    ),
    (
        "What does Soylent (cus_8812) owe? If anything is overdue, email their AP contact "
        "ap@soylent.com a polite reminder",
        ["getCustomerBalance", "send_email"],
    ),
    (
        "Pull the overdue invoices for cus_1029 and open a collections ticket with the list",
        ["listInvoices", "create_ticket"],
    ),
    (
        "credit line 3 of INV-2024-0301 back as a refund and tell the customer on ticket 47719",
        ["createCreditNote", "add_ticket_comment"],
    ),
    (
        "Hooli wants 15 more seats. Update their subscription sub_118 and log the upsell on "
        "the deal dl_2231 as closed won",
        ["changeSubscriptionPlan", "crm.deals.update_stage"],
    ),
    (
        "The customer on sub_5123 asked to pause for the winter. Pause it until March and "
        "add a note on their CRM company record co_5521",
        ["pauseSubscription", "crm.notes.add"],
    ),
    (
        "get invoice in_8hd72 as a PDF-ish summary and forward the original email msg_889 to "
        "the customer's new AP address",
        ["getInvoice", "forward_email"],
    ),
    (
        "check sub 441's renewal date and put a reminder on my calendar a week before it",
        ["getSubscription", "create-event"],
    ),
    # ---------------------------------------------------------------- support combos
    (
        "Open a ticket for raj@kwikemart.com about his broken blender and send him a return "
        "label for order 10233",
        ["create_ticket", "create-return-label"],
    ),
    (
        "Ticket 48555 is a real bug. Escalate it to engineering and file an issue in "
        "acme/storefront with the repro steps",
        ["escalate_ticket", "codehub_create_issue"],
    ),
    (
        "Find all open tickets about the checkout outage and apply the known-outage reply to each",
        ["search_tickets", "apply_macro"],
    ),
    (
        "Read ticket 50102 and then hand it to maria.gomez@acme.com",
        ["get_ticket", "assign_ticket"],
    ),
    (
        "Merge 49932 into 49930, then bump 49930 to high priority",
        ["merge_tickets", "update_ticket"],
    ),
    (
        "Is ticket 50301 about to breach its SLA? If so escalate it to tier 2",
        ["get_sla_status", "escalate_ticket"],
    ),
    (
        "Where is the package for ticket 48990? Track 1Z999AA10123456784 and reply to the "
        "customer on the ticket with the ETA",
        ["track-shipment", "add_ticket_comment"],
    ),
    (
        "customer on ticket 49001 is a big account - look up their company in the CRM and "
        "tag the ticket vip",
        ["crm.companies.get", "update_ticket"],
    ),
    (
        "The shipment for order 9981 is stuck. Reroute shp_9001 to the customer's office and "
        "leave a public reply on ticket 50011",
        ["reroute-shipment", "add_ticket_comment"],
    ),
    (
        "Search helpdesk for complaints about the ACM-BL-300 lid and file an issue for the "
        "hardware team in acme/product-quality",
        ["search_tickets", "codehub_create_issue"],
    ),
    (
        "Escalate 50230 to management and DM Karen so she sees it",
        ["escalate_ticket", "sendDirectMessage"],
    ),
    # ---------------------------------------------------------------- crm combos
    (
        "Add Priya Raman from Hooli as a contact, then open a $40k deal with Hooli for her team",
        ["crm.contacts.create", "crm.deals.create"],
    ),
    (
        "Find Ana at Vandelay in the CRM and log that I called her and left a voicemail",
        ["crm.contacts.search", "crm.activities.log"],
    ),
    (
        "Convert lead ld_7781 and book an intro call with them next Tuesday at 10",
        ["crm.leads.convert", "create-event"],
    ),
    (
        "Mark the Globex deal dl_3308 as won and tell #sales-wins",
        ["crm.deals.update_stage", "postMessage"],
    ),
    (
        "List deals closing this quarter and save them to the forecast sheet sh_302",
        ["crm.deals.list", "sheets_append_rows"],
    ),
    (
        "Look up contact ct_19ab2 and email them the case study from the shared drive",
        ["crm.contacts.get", "drive_search_files", "send_email"],
    ),
    (
        "I had a 40 minute demo with Tom Becker (ct_6032). Log it, add a note that they need "
        "SSO, and move deal dl_1192 to proposal",
        ["crm.activities.log", "crm.notes.add", "crm.deals.update_stage"],
    ),
    (
        "Sara at ct_4410 changed jobs, update her email to sara@newco.io and send her a "
        "congrats note",
        ["crm.contacts.update", "send_email"],
    ),
    (
        "pull up the account for initech.com and create an invoice for their onboarding fee "
        "of $2,000",
        ["crm.companies.get", "createInvoice"],
    ),
    (
        "the deal with Stark (dl_5512) is lost on price. Update the stage and add a "
        "segment... no, just add them to the 'lost-deals-nurture' mailing list: "
        "tony@stark.com",
        ["crm.deals.update_stage", "marketing.lists.add_subscribers"],
    ),
    (
        "Find everyone we know at Globex in the CRM and put them on the Q3 webinar invite "
        "list lst_webinar_q3",
        ["crm.contacts.search", "marketing.lists.add_subscribers"],
    ),
    # ---------------------------------------------------------------- hr combos
    (
        "Book me PTO June 10-14 and set an out-of-office on my calendar for those days",
        ["SubmitTimeOffRequest", "set-out-of-office"],
    ),
    (
        "I'm off next week: request the vacation, turn on my email auto-reply and set my chat "
        "status to 'on leave'",
        ["SubmitTimeOffRequest", "set_auto_reply", "setStatus"],
    ),
    (
        "How many vacation days do I have left? If at least 5, request Aug 4-8 off",
        ["GetTimeOffBalance", "SubmitTimeOffRequest"],
    ),
    (
        "Approve lr_5512 and put Jonas's days off on the team calendar",
        ["ApproveTimeOffRequest", "create-event"],
    ),
    (
        "Onboard Luis Ortega (backend, Austin, start May 6, manager E10210, "
        "luis.ortega@gmail.com), give him access to acme/checkout-api and invite him to "
        "#team-backend",
        ["StartOnboarding", "codehub_add_collaborator", "inviteToChannel"],
    ),
    (
        "New hire Mia Chen starts Monday. Kick off onboarding and schedule a welcome lunch "
        "with her manager at noon",
        ["StartOnboarding", "create-event"],
    ),
    (
        "Ben Foster (E17008) is leaving on the 28th. Start offboarding and transfer his open "
        "tickets to the tier1 queue - find them first",
        ["StartOffboarding", "search_tickets", "assign_ticket"],
    ),
    (
        "Offboard E19021 immediately and rotate the production deploy key he had access to",
        ["StartOffboarding", "cloud.secrets.rotate"],
    ),
    (
        "who reports to Karen Cho (E11002)? set up a team lunch with all of them on Friday",
        ["ListDirectReports", "create-event"],
    ),
    (
        "Aisha (E15320) is promoted to Senior PM: update her title and record the new salary "
        "of 142,000 from July 1",
        ["UpdateEmployee", "UpdateCompensation"],
    ),
    (
        "Find someone in Singapore who speaks Japanese and DM them asking if they can join a "
        "customer call",
        ["SearchEmployees", "sendDirectMessage"],
    ),
    (
        "Is the Berlin office closed on Oct 3? If yes move the team offsite event evt_2291 "
        "to Oct 4",
        ["ListHolidays", "update-event"],
    ),
    (
        "Look up who manages E10293 and forward them the complaint email msg_5512",
        ["GetEmployee", "forward_email"],
    ),
    (
        "Show the org chart under the CTO and export... no, paste it into the leadership doc "
        "doc_1120",
        ["GetOrgChart", "docs_append_text"],
    ),
    # ---------------------------------------------------------------- calendar/email/chat
    (
        "Find a 30 min slot this week for me, Priya and Tom and send the invite",
        ["find-free-slots", "create-event"],
    ),
    (
        "Schedule a design review Thursday 2-3 with ana@acme.com and li@acme.com and book a "
        "room with a screen in Berlin",
        ["create-event", "book-room"],
    ),
    (
        "Cancel Friday's retro and let #team-web know why",
        ["delete-event", "postMessage"],
    ),
    (
        "Move my 2pm with Globex to 4pm and email dana@globex.com to apologize for the shuffle",
        ["update-event", "send_email"],
    ),
    (
        "decline the board prep invite and DM Helen that I'm double-booked",
        ["respond-to-invite", "sendDirectMessage"],
    ),
    (
        "what's on my calendar tomorrow morning? If the 9am is still on, tell #standup I'll be "
        "late",
        ["list-events", "postMessage"],
    ),
    (
        "Find the latest email from the auditors and reply saying we'll send the documents by "
        "Friday",
        ["search_email", "reply_to_email"],
    ),
    (
        "Catch me up on the office move thread and draft a reply I can review",
        ["read_email_thread", "create_draft"],
    ),
    (
        "Find the signed Globex contract in my mail and forward it to legal",
        ["search_email", "forward_email"],
    ),
    (
        "Search chat for the VPN setup instructions and email them to the new contractor "
        "dev@pixelforge.io",
        ["searchMessages", "send_email"],
    ),
    (
        "Create a private channel for Project Atlas, add Rosa and Ahmed, and post the kickoff "
        "agenda",
        ["createChannel", "inviteToChannel", "postMessage"],
    ),
    (
        "archive #launch-2023 and post in #general that it's been archived",
        ["archiveChannel", "postMessage"],
    ),
    (
        "Set my status to 'focus time' and block my calendar 1-4pm for deep work",
        ["setStatus", "create-event"],
    ),
    (
        "Schedule an email to the webinar speakers for tomorrow 8am, and a reminder in "
        "#events at the same time",
        ["schedule_email", "scheduleMessage"],
    ),
    (
        "Make all mail from billing@vendorx.com go to a 'Vendor X' label and forward the last "
        "one to ap@acme.com",
        ["create_mail_filter", "search_email", "forward_email"],
    ),
    (
        "Find the message in #design where Kevin shared the mockups and thumbs-up it",
        ["searchMessages", "addReaction"],
    ),
    (
        "What channels am I in? Leave... actually archive the ones that start with tmp-",
        ["listChannels", "archiveChannel"],
    ),
    # ---------------------------------------------------------------- files/docs
    (
        "Find the Q3 board deck and share it with the board@acme.com group, view only",
        ["drive_search_files", "drive_share_file"],
    ),
    (
        "Create a folder 'Atlas' and move the three Atlas docs into it",
        ["drive_create_folder", "drive_search_files", "drive_move_file"],
    ),
    (
        "Start a postmortem doc for the checkout outage and post the link in #incidents",
        ["docs_create_document", "postMessage"],
    ),
    (
        "Write up today's meeting notes in a new doc and email it to the attendees",
        ["docs_create_document", "send_email"],
    ),
    (
        "Download the signed NDA (f_3310) and attach it in a reply to Dana's email msg_902",
        ["drive_download_file", "reply_to_email"],
    ),
    (
        "Restore yesterday's version of the pricing sheet and let #pricing know someone "
        "overwrote it",
        ["drive_list_versions", "postMessage"],
    ),
    (
        "Upload the W-9 from https://cdn.acme.com/tmp/w9.pdf to Finance and share it with "
        "ap@initech.io",
        ["drive_upload_file", "drive_share_file"],
    ),
    (
        "Read the Q3 numbers from the forecast sheet (sh_302, Q3!A1:F20) and post a summary "
        "to #leadership",
        ["sheets_read_range", "postMessage"],
    ),
    (
        "find the old customer export with PII and delete it for good",
        ["drive_search_files", "drive_delete_file"],
    ),
    # ---------------------------------------------------------------- code/cloud/monitoring
    (
        "Open a PR from fix-login-redirect into main on acme/storefront and ask Marta to review it",
        ["codehub_create_pull_request", "codehub_request_review"],
    ),
    (
        "Create a hotfix branch off v2.4.0 in acme/storefront and open a draft PR for it",
        ["codehub_create_branch", "codehub_create_pull_request"],
    ),
    (
        "Merge acme/storefront#455, cut release v2.4.1 and announce it in #releases",
        ["codehub_merge_pull_request", "codehub_create_release", "postMessage"],
    ),
    (
        "The CI on main in acme/platform is red. Check why, and open an issue with the failing "
        "job's log",
        ["codehub_get_workflow_run", "codehub_create_issue"],
    ),
    (
        "Run the deploy pipeline for checkout-api on release/2.4 and tell me when the run finishes",
        ["codehub_trigger_workflow", "codehub_get_workflow_run"],
    ),
    (
        "Where do we read RETRY_BACKOFF_MS? Show me the file that defines it",
        ["codehub_search_code", "codehub_get_file_contents"],
    ),
    (
        "List PRs waiting on my review in acme/platform and leave an 'LGTM' on 1031",
        ["codehub_list_pull_requests", "codehub_comment_on_pull_request"],
    ),
    (
        "Checkout is throwing 500s. Look at the error logs for checkout-api and, if it started "
        "with the last deploy, roll it back",
        ["monitor.logs.search", "cloud.deployments.rollback"],
    ),
    (
        "Declare a sev2 for checkout latency and page whoever is on call for payments",
        ["monitor.incidents.create", "monitor.oncall.get_current"],
    ),
    (
        "What's firing right now? Ack the disk alert and restart the box it's on, i-0a9f33",
        ["monitor.alerts.list", "monitor.alerts.acknowledge", "cloud.instances.restart"],
    ),
    (
        "The reporting VM is pegged: check its memory graph for the last day and bump it to "
        "m-8vcpu-32gb if it's over 90%",
        ["monitor.metrics.query", "cloud.instances.resize"],
    ),
    (
        "Deploy search-svc sha-9f1c2 to staging and add an uptime check on "
        "https://staging.acme.io/search/health",
        ["cloud.deployments.create", "monitor.uptime.create_check"],
    ),
    (
        "Create a bucket for the status page assets and point status.acme.io to it",
        ["cloud.storage.create_bucket", "cloud.dns.upsert_record"],
    ),
    (
        "Roll back checkout-api in prod, declare a sev1 and post an update in #incidents",
        ["cloud.deployments.rollback", "monitor.incidents.create", "postMessage"],
    ),
    (
        "How much did each team spend on cloud in June? Put the numbers in the FinOps sheet sh_909",
        ["cloud.costs.get_breakdown", "sheets_append_rows"],
    ),
    (
        "the staging db password got pasted in chat. rotate it and file a security issue in "
        "acme/infra",
        ["cloud.secrets.rotate", "codehub_create_issue"],
    ),
    (
        "Which servers are running in acme-data? reboot the one called etl-2",
        ["cloud.instances.list", "cloud.instances.restart"],
    ),
    (
        "p99 latency on checkout-api looks bad - check the metric and start an incident doc",
        ["monitor.metrics.query", "docs_create_document"],
    ),
    # ---------------------------------------------------------------- analytics
    (
        "Get last quarter's revenue by country and email it to the CFO as a spreadsheet",
        ["insights.runReport", "insights.exportReport"],
    ),
    (
        "What's our MRR this month? Post it in #leadership",
        ["insights.getKpi", "postMessage"],
    ),
    (
        "Show me the exec dashboard and schedule the exec report rpt_exec to arrive every "
        "Monday for the leadership team",
        ["insights.getDashboard", "insights.scheduleReport"],
    ),
    (
        "Build a segment of customers who haven't logged in for 60 days and create a win-back "
        "email campaign for them",
        ["insights.createSegment", "marketing.campaigns.create"],
    ),
    (
        "Check the signup funnel for last month and write the findings into doc_7712",
        ["insights.funnel", "docs_append_text"],
    ),
    (
        "Pull cohort retention by signup month and export it to the Growth folder",
        ["insights.cohortRetention", "insights.exportReport"],
    ),
    (
        "What's the current churn rate? And list the subscriptions cancelled... never mind, "
        "just the churn rate and the retention table for weekly cohorts",
        ["insights.getKpi", "insights.cohortRetention"],
    ),
    # ---------------------------------------------------------------- inventory + shipping
    (
        "Do we have ACM-TR-2041 in stock at RNO1? If yes reserve 20 for order 10442",
        ["Inventory_GetStockLevel", "Inventory_ReserveStock"],
    ),
    (
        "Check what's low in CVG2 and raise a PO with sup_112 for the blender motors",
        ["Inventory_ListLowStock", "Inventory_CreatePurchaseOrder"],
    ),
    (
        "Move 200 keyboards (ACM-KB-110) from Reno to CVG2 and book a FedEx pickup at RNO1 "
        "for tomorrow",
        ["Inventory_TransferStock", "schedule-pickup"],
    ),
    (
        "PO-7731 came in with 20 damaged units. Receive it and write off the damaged ones",
        ["Inventory_ReceivePurchaseOrder", "Inventory_AdjustStock"],
    ),
    (
        "Get the weight and dimensions of ACM-LMP-09 and quote shipping 3 of them to Berlin 10115",
        ["Inventory_GetProduct", "get-shipping-rates"],
    ),
    (
        "Raise the retail price of ACM-KB-110 to $54.99 and tell #pricing",
        ["Inventory_UpdatePrice", "postMessage"],
    ),
    (
        "Reserve stock for order 9981, create the shipment with DHL express and email the "
        "tracking details to the customer",
        ["Inventory_ReserveStock", "create-shipment", "send_email"],
    ),
    (
        "Validate the customer's new address and redirect shipment shp_3310 there",
        ["validate-address", "reroute-shipment"],
    ),
    (
        "List everything with a delivery exception and open a ticket for each affected customer",
        ["list-shipments", "create_ticket"],
    ),
    (
        "Compare UPS and FedEx rates for a 12kg box from CVG2 to 10001, then buy the cheaper "
        "label for order 10501",
        ["get-shipping-rates", "create-shipment"],
    ),
    (
        "Send a return label for order 8812 to the customer, and refund them once they send "
        "it back... actually refund now, they're a VIP",
        ["create-return-label", "refund_payment"],
    ),
    (
        "Cancel shipment shp_7781, put the 2 units back on the shelf count at RNO1 and refund "
        "the order",
        ["cancel-shipment", "Inventory_AdjustStock", "refund_payment"],
    ),
    (
        "How many ACM-BL-300 are left in total? If under 100, order 500 more from Tanaka Parts",
        ["Inventory_GetStockLevel", "Inventory_CreatePurchaseOrder"],
    ),
    # ---------------------------------------------------------------- marketing
    (
        "Create the Spring Sale email for the newsletter list, send a test to me and then "
        "schedule it for Tuesday 10am",
        ["marketing.campaigns.create", "marketing.campaigns.send_test", "marketing.campaigns.send"],
    ),
    (
        "Make a promo code SPRING20 for 20% off and announce it on LinkedIn and Instagram on "
        "Monday",
        ["marketing.promo_codes.create", "marketing.social.schedule_post"],
    ),
    (
        "How did cmp_301 perform? Share the numbers with the marketing channel",
        ["marketing.campaigns.get_stats", "postMessage"],
    ),
    (
        "bob@example.org asked to stop getting emails. Unsubscribe him everywhere and mark "
        "him do-not-contact in the CRM (ct_3021)",
        ["marketing.lists.unsubscribe", "crm.contacts.update"],
    ),
    (
        "Add the webinar attendees to the newsletter and log a touchpoint on each contact... "
        "just add them to lst_newsletter for now and send the welcome campaign cmp_welcome",
        ["marketing.lists.add_subscribers", "marketing.campaigns.send"],
    ),
    (
        "Create a WELCOME10 code for new customers and set up an email campaign to the "
        "'new signups' segment that includes it",
        ["marketing.promo_codes.create", "marketing.campaigns.create"],
    ),
    (
        "Black Friday email stats vs last year's please, and export them as a PDF for the "
        "board pack",
        ["marketing.campaigns.get_stats", "insights.exportReport"],
    ),
    # ---------------------------------------------------------------- assorted longer ones
    (
        "A customer from Globex emailed that their invoice INV-2024-0042 has the wrong seat "
        "count. Look at the invoice, issue a credit note for the difference and reply to "
        "their email msg_4410 explaining it",
        ["getInvoice", "createCreditNote", "reply_to_email"],
    ),
    (
        "Our biggest customer Wayne Enterprises had a 4h outage. Give them a $500 credit on "
        "cus_4410, log a note on their company record co_9100 and DM the account owner",
        ["applyAccountCredit", "crm.notes.add", "sendDirectMessage"],
    ),
    (
        "I'm starting as on-call lead next week. Who's on call for platform right now, and "
        "what alerts are firing for them?",
        ["monitor.oncall.get_current", "monitor.alerts.list"],
    ),
    (
        "Soylent's payment bounced. Check their outstanding balance, pause their subscription "
        "sub_640 until they fix the card, and open a billing ticket",
        ["getCustomerBalance", "pauseSubscription", "create_ticket"],
    ),
    (
        "Vandelay wants out. Cancel sub_7012 immediately, mark deal dl_4455 lost (no budget) "
        "and email their admin that the account will close",
        ["cancelSubscription", "crm.deals.update_stage", "send_email"],
    ),
    (
        "new contractor from PixelForge starts tomorrow: give dev@pixelforge.io edit on the "
        "design folder fld_221 and write access on acme/marketing-site",
        ["drive_share_file", "codehub_add_collaborator"],
    ),
    (
        "set up the quarterly business review with Initech: find a slot with "
        "cto@initech.io next week, send the invite and book a room in New York",
        ["find-free-slots", "create-event", "book-room"],
    ),
    (
        "I'm travelling to Singapore next week - what holidays are there and do I still have "
        "enough PTO for an extra day?",
        ["ListHolidays", "GetTimeOffBalance"],
    ),
    (
        "Someone at Initech (jorge@initech.io) reported a security hole by email. Forward it to "
        "security@acme.com and open a private sev2 incident",
        ["forward_email", "monitor.incidents.create"],
    ),
    (
        "Create the 'Enterprise trials' segment and run a report of their conversion rate by plan",
        ["insights.createSegment", "insights.runReport"],
    ),
    (
        "Tom Becker from Beckerbau wants to buy: add him as a contact, open a 12k EUR deal, "
        "draft invoice for the deposit",
        ["crm.contacts.create", "crm.deals.create", "createInvoice"],
    ),
    (
        "charge the remaining $4,000 on the Initech project to cus_7730 and mark their "
        "support ticket 50404 solved",
        ["charge_card", "update_ticket"],
    ),
    (
        "customer says the package never arrived (order 10233). Check tracking on shp_5521, "
        "and if it's lost just send a new one overnight",
        ["track-shipment", "create-shipment"],
    ),
    (
        "The Amsterdam warehouse is short on ACM-TR-2041; send 100 from RNO1 and let "
        "ops-eu@acme.com know by email",
        ["Inventory_TransferStock", "send_email"],
    ),
    (
        "post the new holiday schedule for the London office in #london",
        ["ListHolidays", "postMessage"],
    ),
    (
        "get payouts for May and add them to the reconciliation sheet",
        ["list_payouts", "sheets_append_rows"],
    ),
    (
        "Find the runbook for the payments service on the drive and DM it to the new on-call",
        ["drive_search_files", "sendDirectMessage"],
    ),
    (
        "Who's on the storefront pager? Text... DM them that acme/storefront#455 is ready to merge",
        ["monitor.oncall.get_current", "sendDirectMessage"],
    ),
    (
        "Let's do a lunch-and-learn on Kubernetes: find who in Berlin knows it and invite them "
        "to a session next Wednesday noon",
        ["SearchEmployees", "create-event"],
    ),
    (
        "Attach the revenue dashboard numbers to the monthly investor update doc_3030",
        ["insights.getDashboard", "docs_append_text"],
    ),
    (
        "Jane can't log in. Open a ticket for jane.doe@example.com and apply the password "
        "reset macro",
        ["create_ticket", "apply_macro"],
    ),
    (
        "Log the ACM-BL-300 lid defect: write off the 12 damaged units at CVG2 and open an "
        "issue in acme/product-quality",
        ["Inventory_AdjustStock", "codehub_create_issue"],
    ),
    (
        "Accept the Globex QBR invite and book a room for it in Austin",
        ["respond-to-invite", "book-room"],
    ),
    # ---------------------------------------------------------------- four-tool requests
    (
        "kim@example.com got the wrong color on order 10233. Open a ticket for her, send a "
        "prepaid return label, refund the order and note on the ticket that it's all done",
        ["create_ticket", "create-return-label", "refund_payment", "add_ticket_comment"],
    ),
    (
        "Checkout is down!! declare a sev1, find out who's on call for payments, roll "
        "checkout-api in prod back to the last good version and post a status in #incidents",
        [
            "monitor.incidents.create",
            "monitor.oncall.get_current",
            "cloud.deployments.rollback",
            "postMessage",
        ],
    ),
    (
        "Mia Chen (designer, mia.c@outlook.com) starts 2025-03-03 under E13377. Start her "
        "onboarding, give mia.chen@acme.com edit access to the brand folder fld_88, add her to "
        "#design and put a 1:1 with her manager on her first day",
        ["StartOnboarding", "drive_share_file", "inviteToChannel", "create-event"],
    ),
    (
        "Launch day plan: make a LAUNCH15 discount code, build the launch email for the "
        "newsletter list, send it right away and get a LinkedIn post out at the same time",
        [
            "marketing.promo_codes.create",
            "marketing.campaigns.create",
            "marketing.campaigns.send",
            "marketing.social.schedule_post",
        ],
    ),
    (
        "end of quarter: find the deals that closed won this quarter, bill each of them, send "
        "the invoices and drop a note in #sales-wins",
        ["crm.deals.list", "createInvoice", "sendInvoice", "postMessage"],
    ),
]
