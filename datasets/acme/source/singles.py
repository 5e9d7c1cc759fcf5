"""Single-tool requests, written by hand: tool name -> requests it answers."""

SINGLES: dict[str, list[str]] = {
    # ------------------------------------------------------------------ crm
    "crm.contacts.search": [
        "who do we have in the CRM at Globex? I need a contact there",
        "Find me the person whose email is m.okafor@initech.io in our customer records",
    ],
    "crm.contacts.get": [
        "Pull up contact ct_19ab2 with their deals and notes",
        "Can you show me everything we have on file for contact ct_88f01, custom fields too?",
    ],
    "crm.contacts.create": [
        "Add Priya Raman (priya.raman@hooli.com), VP Ops at Hooli, as a new contact. "
        "If she's already in there just merge it.",
        "new contact pls: Tom Becker, tom@beckerbau.de, +49 30 1234567",
    ],
    "crm.contacts.update": [
        "Sara Lindqvist got promoted to Head of Procurement, update her title on ct_4410",
        "mark contact ct_7720 as do-not-contact, they asked us to stop calling",
    ],
    "crm.companies.get": [
        "What do we know about umbrella-corp.com as an account? size, industry, who owns it",
        "look up the account record for company co_5521",
    ],
    "crm.deals.create": [
        "Open an opportunity with Globex for the 200-seat renewal, about $84k, closing end of Q3",
        "create a new deal for Initech, 12,000 EUR, we're at proposal stage already",
    ],
    "crm.deals.update_stage": [
        "The Hooli deal (dl_3308) is lost, they went with a competitor",
        "move deal dl_1192 to negotiation",
    ],
    "crm.deals.list": [
        "Which of my deals are supposed to close this month?",
        "show all opportunities over 50k sitting in proposal",
    ],
    "crm.notes.add": [
        "Put a note on the Stark Industries account: their fiscal year starts in April, "
        "budget talks happen in Feb",
        "jot down on deal dl_2231 that legal review is pending on their side",
    ],
    "crm.activities.log": [
        "Log a 25 minute call with ct_6032 this morning, we connected and they want a demo",
        "I just did a demo for Ana from Vandelay (ct_9901). Record it in her timeline pls",
    ],
    "crm.leads.convert": [
        "Lead ld_7781 is qualified, turn it into a contact + company and open a 30k deal",
        "convert lead ld_2045",
    ],
    # ------------------------------------------------------------------ billing
    "getInvoice": [
        "Show me invocie INV-2024-0042 with the line items",
        "what's on the bill we sent Vandelay last week, in_8hd72? need the tax breakdown",
    ],
    "listInvoices": [
        "List all unpaid invoices for customer cus_3381",
        "which bills has Globex paid this year?",
        "any overdue invoices on account cus_1029?",
    ],
    "createInvoice": [
        "Draft an invoice for cus_7730: 40 hours of onboarding consulting at $150/h, net 15",
        "I need to bill Initech for the 3 extra training sessions, 500 EUR each. "
        "Don't send it yet, just prepare it",
    ],
    "sendInvoice": [
        "Finalize draft in_55ab1 and send it to their AP team",
        "send out invoice in_90c2 to billing@hooli.com and ap@hooli.com",
    ],
    "voidInvoice": [
        "Void INV-2024-0188, it was created against the wrong customer",
        "that invoice in_1772 should never have gone out. kill it",
    ],
    "createCreditNote": [
        "Issue a credit note for line 2 of INV-2024-0301 - they were charged twice for the "
        "same seats",
        "customer was unhappy with the March service, credit the whole invoice in_7731 back "
        "to their balance",
    ],
    "applyAccountCredit": [
        "Give cus_4410 a $200 goodwill credit for the outage on Tuesday",
        "add 50 GBP of credit to Wayne Enterprises' account, expires end of year",
    ],
    "getSubscription": [
        "When does sub_441 renew and how many seats are on it?",
        "what plan is subscription sub_9023 on",
    ],
    "changeSubscriptionPlan": [
        "Upgrade sub_2201 from Team to Business, annual billing",
        "Hooli wants to go from 25 to 40 seats on their subscription sub_118, prorate it",
        "downgrade sub_7012 to starter, no proration",
    ],
    "cancelSubscription": [
        "cancel sub 441",
        "The customer on sub_3090 is switching to a competitor. Cancel at the end of their "
        "current period and note that as the reason.",
    ],
    "pauseSubscription": [
        "Can we put sub_5123 on hold until March 1st? They keep access meanwhile",
        "freeze billing for subscription sub_640 for two months, seasonal business",
    ],
    "getCustomerBalance": [
        "How much does cus_2290 owe us right now, and how much is overdue?",
        "whats the outstanding amount on Soylent Corp's account (cus_8812)",
    ],
    # ------------------------------------------------------------------ payments
    "charge_card": [
        "Charge cus_5501's card on file $1,250 for the setup fee",
        "run a charge of 89 euros on customer cus_771 for the replacement part",
    ],
    "capture_payment": [
        "The order shipped, capture the authorized payment pay_3kd92",
        "only capture $80 of the $120 hold on pay_77a1, one item was out of stock",
    ],
    "void_authorization": [
        "Release the hold on pay_a881, the customer abandoned the order",
        "cancel that pending authorization pay_10c3, it's a duplicate",
    ],
    "refund_payment": [
        "Refund order 8812",
        "Give back $15 of payment pay_98s1 - partial refund, item arrived damaged",
        "customer was double charged on pay_5520, please reverse the second charge in full",
    ],
    "get_payment": [
        "Did payment pay_7sk2 go through? What card was used?",
        "check the risk score on the payment for order 10233",
    ],
    "list_payments": [
        "show me all failed payments since yesterday",
        "List the charges for customer cus_6610 in the last 30 days",
    ],
    "create_payment_link": [
        "I need a checkout link for $499 for the 'Acme Pro Workshop' ticket, valid until Friday",
        "Make a pay link for 1,200 SGD for the Singapore partner summit sponsorship",
    ],
    "list_disputes": [
        "Are there any chargebacks we still need to respond to?",
        "list open disputes and their evidence deadlines",
    ],
    "submit_dispute_evidence": [
        "For dispute dp_2219, send the tracking number 1Z999AA10123456784 and our refund "
        "policy as evidence",
        "respond to chargeback dp_8870: customer signed for the delivery, explain that to the bank",
    ],
    "list_payouts": [
        "When is the next payout hitting our bank account?",
        "show payouts that failed this month",
    ],
    "update_payment_method": [
        "Customer cus_3302 got a new card pm_77x, make it their default",
        "update expiry on pm_1209 for cus_990 to 09/2028",
    ],
    # ------------------------------------------------------------------ support
    "create_ticket": [
        "Open a ticket for jane.doe@example.com: she can't log in after resetting her password",
        "A customer called (Raj, raj@kwikemart.com) about a damaged blender. "
        "Log it as a phone case, shipping area, high priority",
    ],
    "get_ticket": [
        "pull up ticket 48213 and show me the whole conversation",
        "What's the latest on case #50102? include internal notes",
    ],
    "update_ticket": [
        "set 47719 to pending, we're waiting on the customer",
        "Bump ticket 49001 to urgent and tag it vip",
    ],
    "assign_ticket": [
        "Give ticket 48830 to maria.gomez@acme.com",
        "route case 50011 to the billing-tier1 queue",
    ],
    "add_ticket_comment": [
        "Reply on ticket 49120 telling the customer the replacement ships Monday",
        "Leave an internal note on 48002: customer is also disputing the charge with the bank, "
        "don't refund yet",
    ],
    "search_tickets": [
        "Find all open tickets from anyone at globex.com",
        "any helpdesk cases mentioning 'error 504' this week?",
    ],
    "escalate_ticket": [
        "Escalate 48555 to engineering, the export bug is reproducible",
        "this one needs a manager - ticket 50230, customer is threatening to cancel",
    ],
    "merge_tickets": [
        "48100, 48101 and 48107 are all the same issue from the same customer. "
        "Combine them into 48100",
        "merge duplicate case 49932 into 49930",
    ],
    "get_sla_status": [
        "Have we breached the response SLA on ticket 50301?",
        "how long until 49877 blows its resolution target",
    ],
    "apply_macro": [
        "Send the standard shipping-delay response on ticket 48990",
        "use the password reset canned reply on 50404",
    ],
    # ------------------------------------------------------------------ hr
    "GetEmployee": [
        "Who is Dana Whitfield's manager and when did she start?",
        "pull the employee profile for E10293",
    ],
    "SearchEmployees": [
        "Who in the Berlin office knows Kubernetes?",
        "find someone on the legal team named Marco",
    ],
    "SubmitTimeOffRequest": [
        "Book PTO for me from Dec 22 to Jan 2",
        "I'm sick today, please log a sick day",
        "Request a half day off on Friday the 14th, afternoon, for a dentist appointment",
    ],
    "ApproveTimeOffRequest": [
        "aprove Jonas's leave request lr_5512",
        "deny vacation request lr_6620, we have the product launch that week. tell him sorry",
    ],
    "GetTimeOffBalance": [
        "How many vacation days do I have left?",
        "whats E20481's remaining holiday allowance as of end of June",
    ],
    "ListDirectReports": [
        "who reports to E10050?",
        "list everyone on Karen Cho's team (her id is E11002), contractors included",
    ],
    "GetOrgChart": [
        "Show me the org chart under the VP of Engineering, three levels deep",
        "what does the reporting structure of the Data department look like",
    ],
    "StartOnboarding": [
        "We hired Luis Ortega as a Backend Engineer, starting May 6 in Austin, reporting to "
        "E10210. His personal email is luis.ortega@gmail.com. Set him up with a laptop and "
        "two monitors.",
        "kick off onboarding for our new designer Mia Chen (mia.c@outlook.com), start date "
        "2025-03-03, manager E13377, remote",
    ],
    "StartOffboarding": [
        "Ben Foster (E17008) resigned, his last day is the 28th",
        "Start the exit process for E19021 - involuntary, cut access immediately",
    ],
    "UpdateEmployee": [
        "Move E14410 to the London office effective next month",
        "Aisha is now a Senior Product Manager and reports to E10501 - update her record (E15320)",
    ],
    "UpdateCompensation": [
        "Record a 6% merit raise for E12001, new salary 95,400 USD from April 1",
        "give E13009 a $2,000 spot bonus for covering the incident weekend",
    ],
    "ListHolidays": [
        "What are the public holidays in Singapore this year?",
        "is the London office closed on any days in May 2025?",
    ],
    # ------------------------------------------------------------------ calendar
    "create-event": [
        "Put a 1:1 with Omar on my calendar Thursday 3-3:30pm",
        "Schedule the Q3 planning kickoff for Sept 2, 10am-12pm Berlin time, invite "
        "leads@acme.com and add a Zoom link",
        "set up a weekly standup every Monday 9:15 with the platform team",
    ],
    "list-events": [
        "whats on my calender tomorrow?",
        "Show me Kim's meetings for next week",
    ],
    "update-event": [
        "Push my 2pm with Globex to 4pm",
        "Add ravi@acme.com to the design review on Wednesday (evt_8812) and move it to room Aurora",
    ],
    "delete-event": [
        "Cancel the retro on Friday, tell people we'll fold it into next week",
        "delete all future occurrences of the Tuesday sync evt_3371",
    ],
    "find-free-slots": [
        "When are Priya, Tom and I all free for an hour next week?",
        "find a 45-min window tomorrow where both ana@acme.com and li@acme.com are available",
    ],
    "respond-to-invite": [
        "Accept the invite for the board prep meeting",
        "decline evt_4451 and suggest Thursday at 11 instead",
    ],
    "book-room": [
        "I need a room for 8 people with video in the London office tomorrow 2-3pm",
        "grab a meeting room in NYC with a whiteboard for friday morning 9 to 11",
    ],
    "set-out-of-office": [
        "Block my calendar as OOO from Aug 5 to Aug 16 and auto-decline any new meetings",
        "mark me out of office next monday",
    ],
    # ------------------------------------------------------------------ email
    "send_email": [
        "Email dana@globex.com to say the contract is countersigned and we're good to go",
        "Write to the finance team (finance@acme.com) with subject 'Q2 accruals' and say "
        "the numbers are final",
    ],
    "reply_to_email": [
        "Reply to Tom's last message saying Tuesday works, reply all",
        "answer msg_77a2 with 'thanks, received'",
    ],
    "forward_email": [
        "forward the quote from Initech to legal@acme.com with a note asking for review",
        "Send that email msg_301 on to jorge@acme.com, keep the attachments",
    ],
    "search_email": [
        "Find the email from Globex with the signed contract attached",
        "did I get anything from the auditors after March 1?",
    ],
    "read_email_thread": [
        "Show me the whole thread th_5512 so I can catch up",
        "what did everyone say in the email chain about the office move?",
    ],
    "create_draft": [
        "draft a note to the Hooli team about the price increase but don't send it, I want to "
        "review it",
        "Prepare an email to hr@acme.com asking about the relocation policy. Leave it in drafts",
    ],
    "schedule_email": [
        "Send the reminder to the webinar speakers tomorrow at 8am, not now",
        "queue an email to team@acme.com for Monday 9:00 saying the office is closed for "
        "maintenance",
    ],
    "set_auto_reply": [
        "Turn on my vacation responder from Friday, saying I'm back on the 19th",
        "switch off the auto reply",
    ],
    "create_mail_filter": [
        "Make all emails from noreply@codehub.dev skip my inbox and get the label 'CI'",
        "auto-forward anything with 'invoice' in the subject to ap@acme.com",
    ],
    # ------------------------------------------------------------------ chat
    "postMessage": [
        "Post in #releases that 2.4 is out",
        "let #ops know the database maintenance starts in 10 minutes",
        "Reply in the thread under the outage message in #incidents: root cause found",
    ],
    "sendDirectMessage": [
        "DM Kevin to ask if he can cover my on-call shift",
        "ping @lena privately: the slides are ready",
    ],
    "scheduleMessage": [
        "Post 'standup in 5' in #team-web at 9:55 every... just tomorrow is fine",
        "Schedule a message in #general for Friday 4pm reminding everyone about the party",
    ],
    "createChannel": [
        "Create a private channel called proj-atlas for the Atlas project",
        "spin up a new public channel #help-billing",
    ],
    "inviteToChannel": [
        "Add Rosa and Ahmed to #proj-atlas",
        "invite the new interns to the general chat room",
    ],
    "archiveChannel": [
        "archive #launch-2023, the launch is long done",
        "Close down the old #tmp-migration channel",
    ],
    "listChannels": [
        "which channels am I in?",
        "What public channels exist on our workspace?",
    ],
    "searchMessages": [
        "Find where someone posted the VPN setup instructions in chat",
        "search chat for messages from Lena about the Q3 roadmap",
    ],
    "addReaction": [
        "react with a thumbs up to the last message in #design",
        "put a :white_check_mark: on Kevin's message so he knows it's done",
    ],
    "setStatus": [
        "Set my status to 'In workshops all day' with a calendar emoji until 6pm",
        "update my status to commuting",
    ],
    # ------------------------------------------------------------------ files
    "drive_upload_file": [
        "Upload this PDF (https://cdn.acme.com/tmp/w9.pdf) to the Finance/Tax folder",
        "save the attached spreadsheet to my drive as budget_v3.xlsx",
    ],
    "drive_download_file": [
        "Download the Q3 board deck as a PDF",
        "get me the contents of file f_8812 as plain text",
    ],
    "drive_search_files": [
        "where's the brand guidelines doc?",
        "Find spreadsheets Ana edited in the last week",
        "look for any contract PDFs shared with me by legal",
    ],
    "drive_share_file": [
        "Share the roadmap deck with sam@acme.com, view only",
        "give the contractor (dev@pixelforge.io) edit access to folder fld_221 without "
        "notifying them",
    ],
    "drive_create_folder": [
        "make a new folder 'Customer Interviews 2025' under Research",
        "Create a folder for the Atlas project",
    ],
    "drive_move_file": [
        "move the old pricing sheet into the Archive folder",
        "Put file f_3310 into folder fld_90",
    ],
    "drive_delete_file": [
        "trash the draft_final_FINAL2 doc",
        "Permanently delete f_777, it has customer PII in it",
    ],
    "drive_list_versions": [
        "Someone overwrote the pricing spreadsheet - roll it back to yesterday's version",
        "what's the revision history of the security policy doc",
    ],
    "docs_create_document": [
        "Start a postmortem doc for yesterday's checkout outage",
        "Create a blank document titled 'Offsite agenda'",
    ],
    "docs_append_text": [
        "add today's decisions to the bottom of the Atlas meeting notes doc (doc_4410) under "
        "a heading with today's date",
        "Append the action items list to doc_7712",
    ],
    "sheets_append_rows": [
        "Add a row to the hiring tracker: Luis Ortega, Backend, offer accepted, 2025-05-06",
        "log these three expenses in the 'Travel' tab of sheet sh_881",
    ],
    "sheets_read_range": [
        "What's in cells A1 to F20 of the Q3 tab in the forecast sheet?",
        "read column B of the pricing spreadsheet sh_302",
    ],
    # ------------------------------------------------------------------ code
    "codehub_create_issue": [
        "File a bug in acme/storefront: the cart badge doesn't update after removing an item",
        "open an issue on acme/mobile-app for dark mode support, label it enhancement",
    ],
    "codehub_create_pull_request": [
        "Open a PR from feature/tax-rounding into main on acme/billing-svc",
        "create a draft pull request for my branch fix-login-redirect in acme/storefront",
    ],
    "codehub_list_pull_requests": [
        "what PRs are waiting for my review in acme/platform?",
        "list open pull requests in acme/storefront",
    ],
    "codehub_request_review": [
        "ask @ntan and the security team to review PR 812 in acme/auth-svc",
        "Get Marta to review acme/storefront#455",
    ],
    "codehub_comment_on_pull_request": [
        "Leave a comment on PR 1031 in acme/platform: please add a test for the retry path",
        "on acme/billing-svc#220, comment on src/tax.py line 88 that this rounds the wrong way",
    ],
    "codehub_merge_pull_request": [
        "Squash and merge acme/storefront#455",
        "merge PR 1031 on acme/platform and keep the branch",
    ],
    "codehub_get_file_contents": [
        "Show me the Dockerfile in acme/checkout-api",
        "what's in config/prod.yaml on the release-2.3 branch of acme/platform",
    ],
    "codehub_create_branch": [
        "Create branch hotfix/2.4.1 off the v2.4.0 tag in acme/storefront",
        "new branch feature/gift-cards in acme/billing-svc",
    ],
    "codehub_search_code": [
        "where in our code do we call the legacy tax API?",
        "search the repos for usages of RETRY_BACKOFF_MS",
    ],
    "codehub_trigger_workflow": [
        "kick off the nightly e2e tests on main in acme/storefront",
        "Run deploy.yml on acme/checkout-api for the release/2.4 branch with env=staging",
    ],
    "codehub_get_workflow_run": [
        "why did the last CI run on main fail in acme/platform? show me the logs",
        "is the build for run 88123 in acme/storefront done yet",
    ],
    "codehub_create_release": [
        "Cut release v2.4.0 of acme/storefront with auto-generated notes",
        "publish a pre-release 3.0.0-rc1 for acme/mobile-app",
    ],
    "codehub_add_collaborator": [
        "give pixelforge-dev write access to acme/marketing-site",
        "Add @jlee as an admin on the acme/infra repo",
    ],
    # ------------------------------------------------------------------ cloud
    "cloud.instances.list": [
        "Which VMs are running in the payments project in eu-central-1?",
        "list all stopped servers in project acme-data",
    ],
    "cloud.instances.restart": [
        "reboot i-0a9f33 please, it's hung",
        "Hard restart the worker-7 instance",
    ],
    "cloud.instances.resize": [
        "The reporting box keeps running out of memory, bump i-44ce to m-8vcpu-32gb; a restart "
        "is fine",
        "scale down i-771b to the smallest machine type",
    ],
    "cloud.deployments.create": [
        "Deploy checkout-api 2.4.0 to production as a 10% canary",
        "ship image tag sha-9f1c2 of search-svc to staging",
    ],
    "cloud.deployments.rollback": [
        "Roll back checkout-api in production to the previous version, now!",
        "revert search-svc on staging to revision r-118",
    ],
    "cloud.dns.upsert_record": [
        "Point status.acme.io at acme.statuspage.net (CNAME)",
        "add a TXT record for domain verification on acme.com: acme-verify=8f2a1",
    ],
    "cloud.storage.create_bucket": [
        "Create a versioned bucket acme-backups-eu in eu-central-1",
        "new storage bucket for raw logs in us-east-1, delete stuff after 30 days",
    ],
    "cloud.costs.get_breakdown": [
        "How much did we spend on cloud last month per team?",
        "break down our cloud bill by service for Q2, monthly",
    ],
    "cloud.secrets.rotate": [
        "Rotate the payment gateway API key that billing uses in production",
        "the staging database password leaked in a screenshot, rotate it",
    ],
    # ------------------------------------------------------------------ monitoring
    "monitor.alerts.list": [
        "What alerts are firing right now?",
        "any critical alarms for checkout-api?",
    ],
    "monitor.alerts.acknowledge": [
        "ack alert al_5521, I'm looking into it",
        "Acknowledge the disk space alert al_903 and snooze it for an hour",
    ],
    "monitor.metrics.query": [
        "What's the p99 latency of checkout-api over the last 6 hours?",
        "graph CPU usage on the search cluster since midnight",
    ],
    "monitor.logs.search": [
        "Show me the 500 errors from checkout-api in the last 15 minutes",
        "grep the logs for 'payment declined' since 10:00",
    ],
    "monitor.incidents.create": [
        "Declare a sev1: checkout is down for all users",
        "open an incident for the slow search results, sev3, search-svc affected",
    ],
    "monitor.oncall.get_current": [
        "Who's on call for payments right now?",
        "who has the platform pager this saturday night",
    ],
    "monitor.uptime.create_check": [
        "Set up uptime monitoring for https://shop.acme.com every 30 seconds from the US and EU",
        "I want to be alerted if api.acme.io/health stops returning 200",
    ],
    # ------------------------------------------------------------------ analytics
    "insights.runReport": [
        "Revenue by country for last quarter",
        "How many signups did we get per channel in October?",
        "run the weekly sales report rpt_sales_wk",
    ],
    "insights.getDashboard": [
        "Open the exec dashboard for this month",
        "show me the marketing-overview dashboard numbers",
    ],
    "insights.getKpi": [
        "What's our MRR right now and how does it compare to last month?",
        "current churn rate?",
    ],
    "insights.exportReport": [
        "Export report rpt_442 to Excel",
        "Save the churn analysis report as a CSV to the Finance drive folder",
    ],
    "insights.scheduleReport": [
        "Send the weekly pipeline report to sales-leads@acme.com every Monday at 8am as a PDF",
        "email rpt_ops_daily to me each morning",
    ],
    "insights.funnel": [
        "What's the conversion from product page view to checkout completed over the last 30 "
        "days, split by device?",
        "funnel: signup -> onboarding_done -> first_invoice, Q1",
    ],
    "insights.cohortRetention": [
        "Show me monthly retention by signup cohort for the past year",
        "how well do weekly signup cohorts stick around?",
    ],
    "insights.createSegment": [
        "Save a segment of users who bought more than 3 times in the last 90 days",
        "create an audience 'Dormant EU' - country in EU and no login in 60 days",
    ],
    # ------------------------------------------------------------------ inventory
    "Inventory_GetStockLevel": [
        "How many ACM-TR-2041 do we have in Reno?",
        "stock check on SKU ACM-KB-110 across all warehouses",
    ],
    "Inventory_AdjustStock": [
        "Write off 12 units of ACM-BL-300 at CVG2, they were damaged by a forklift",
        "we found 5 extra ACM-TR-2041 in AMS1 during the recount, add them",
    ],
    "Inventory_TransferStock": [
        "Move 200 units of ACM-KB-110 from RNO1 to CVG2, expedited",
        "rebalance: send 50 ACM-BL-300 from Amsterdam to Singapore",
    ],
    "Inventory_ListLowStock": [
        "What's running low in the Singapore warehouse?",
        "Which kitchen products are below reorder point or have less than 10 days of cover?",
    ],
    "Inventory_CreatePurchaseOrder": [
        "Order 1,000 ACM-KB-110 from supplier sup_112 at $4.20 each, deliver to RNO1",
        "raise a PO with Tanaka Parts for 300 blender motors to CVG2, need them by June 10",
    ],
    "Inventory_ReceivePurchaseOrder": [
        "PO-7731 arrived: 480 good, 20 damaged of ACM-BL-300",
        "recieve PO-8102 in full",
    ],
    "Inventory_GetProduct": [
        "How heavy is ACM-TR-2041 and who supplies it?",
        "product details for SKU ACM-LMP-09",
    ],
    "Inventory_UpdatePrice": [
        "Set the retail price of ACM-KB-110 to $49.99 starting Monday",
        "change wholesale price for ACM-BL-300 to 120 EUR",
    ],
    "Inventory_ReserveStock": [
        "Hold 20 units of ACM-TR-2041 for order 10442 at RNO1",
        "reserve the items for order 9981 for 2 hours while payment clears",
    ],
    # ------------------------------------------------------------------ shipping
    "get-shipping-rates": [
        "How much to ship a 4 kg box from 89502 to Toronto M5V 2T6 by express?",
        "quote rates for two 10kg parcels from Reno to Berlin 10115",
    ],
    "create-shipment": [
        "Create a UPS ground label for order 10442 from RNO1",
        "ship order 9981 overnight with FedEx, signature required, insure for $2,500",
    ],
    "track-shipment": [
        "where's my package 1Z999AA10123456784",
        "Track shipment shp_5521 - when will it arrive?",
    ],
    "list-shipments": [
        "list all shipmnets with delivery exceptions",
        "what went out with DHL since Monday?",
    ],
    "cancel-shipment": [
        "Void the label for shipment shp_7781, the customer changed their mind",
        "cancel shp_102 before pickup",
    ],
    "schedule-pickup": [
        "Book a FedEx pickup at CVG2 tomorrow between 2 and 5pm, about 40 boxes",
        "arrange for DHL to collect from Amsterdam warehouse Friday morning",
    ],
    "create-return-label": [
        "Customer on order 10233 got the wrong color, send them a prepaid return label at "
        "kim@example.com",
        "return label for order 8812, reason: doesn't fit",
    ],
    "validate-address": [
        "Is '1600 Amphitheatre Pkwy, Mountain View, CA 94043' a deliverable address?",
        "check this address for typos before we ship: 221B Baker Stret, London NW1 6XE, GB",
    ],
    "reroute-shipment": [
        "The customer moved - redirect shp_3310 to 55 Water St, New York, NY 10041",
        "hold shipment shp_9001 at the nearest carrier location, nobody's home",
    ],
    # ------------------------------------------------------------------ marketing
    "marketing.campaigns.create": [
        "Set up an email campaign 'Spring Sale' for the newsletter list using template tpl_44",
        "create a push campaign for the 'Dormant EU' segment announcing the new app",
    ],
    "marketing.campaigns.send": [
        "Blast the Spring Sale campaign cmp_301 to everyone now",
        "schedule campaign cmp_88 to go out Tuesday 10am",
    ],
    "marketing.campaigns.send_test": [
        "send me and ana@acme.com a test of cmp_301",
        "Preview the newsletter campaign in my inbox before it goes out",
    ],
    "marketing.campaigns.get_stats": [
        "How did the Black Friday email do? open rate, clicks, revenue",
        "compare cmp_301 performance with cmp_288",
    ],
    "marketing.lists.add_subscribers": [
        "Add the 40 webinar attendees to the newsletter list, they already opted in",
        "subscribe lisa@example.com to list lst_product_updates",
    ],
    "marketing.lists.unsubscribe": [
        "Take bob@example.org off all our marketing emails",
        "remove kim@example.com from the product updates list only",
    ],
    "marketing.promo_codes.create": [
        "Create a 20% off code SPRING20, max 500 uses, expiring April 30",
        "make a $10 discount code for the blender, WELCOME10",
    ],
    "marketing.social.schedule_post": [
        "Schedule a LinkedIn and X post for Thursday 9am announcing our Series C",
        "post the product launch video on instagram tomorrow at noon",
    ],
}
